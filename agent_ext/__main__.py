"""``python -m agent_ext``: the tour of the tool framework."""

from agent_ext.demo import run

run()
