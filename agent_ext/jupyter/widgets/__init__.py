"""agent_ext's notebook widgets: approval diffs, run transcripts, the tool catalogue, questions
and project trust.

Each is an anywidget whose JavaScript ships with the package; each also publishes plain HTML of
its current state, so a notebook saved with these outputs still reads without a kernel.
"""

from .ask import Answer, AskUserWidget
from .catalogue import ToolCatalogueWidget
from .confirm import ConfirmDiffWidget, ConfirmGroupWidget
from .transcript import TranscriptWidget
from .trust import ProjectTrustWidget

__all__ = [
    "Answer",
    "AskUserWidget",
    "ConfirmDiffWidget",
    "ConfirmGroupWidget",
    "ProjectTrustWidget",
    "ToolCatalogueWidget",
    "TranscriptWidget",
]
