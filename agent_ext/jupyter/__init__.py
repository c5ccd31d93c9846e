"""The kernel host: the IPython extension, the ``%agent`` magics, approvals and headless runs.

Nothing is imported here, so ``%load_ext agent_ext`` stays cheap; each module loads on first use.
"""
