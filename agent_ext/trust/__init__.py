"""Project trust: a project's own files narrow at once and widen only once the user trusts them.

See ``project`` (what is withheld), ``store`` (the kept answers) and ``state`` (the answer in
force). Nothing here imports the agent, the models or IPython.
"""

from .project import ProjectAsk, ProjectFiles, TrustItem, read_project
from .state import TRUST_HINT, ProjectTrust, Status, TrustChoice, check_project
from .store import STORE_NAME, TrustRecord, TrustStore, forget_once, trust_once, trusted_once

__all__ = [
    "STORE_NAME",
    "TRUST_HINT",
    "ProjectAsk",
    "ProjectFiles",
    "ProjectTrust",
    "Status",
    "TrustChoice",
    "TrustItem",
    "TrustRecord",
    "TrustStore",
    "check_project",
    "forget_once",
    "read_project",
    "trust_once",
    "trusted_once",
]
