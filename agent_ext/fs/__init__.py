"""Files for the agent: the read cache and prior-read gate, text I/O, atomic writes, edit
history, file paths and the read-selector grammar.

Nothing here imports IPython or the agent; ``matching`` (the fuzzy edit matcher) is imported
from its own module.
"""

from .atomic import AtomicWriteError, atomic_write, remove_stale_temps
from .cache import CacheState, ReadCache, ReadEntry
from .history import EditEntry, EditHistory, UndoResult
from .paths import resolve_path, split_selector, unescape_shell
from .prior_read import PriorRead, Verb, check_prior_read
from .selectors import LineRange, Selector, SelectorError, parse_selector
from .textio import (
    BinaryFileError,
    TextEncodeError,
    TextFile,
    decode_text,
    encode_text,
    is_binary,
    read_text,
    sniff_binary,
    write_text,
)

__all__ = [
    "AtomicWriteError",
    "BinaryFileError",
    "CacheState",
    "EditEntry",
    "EditHistory",
    "LineRange",
    "PriorRead",
    "ReadCache",
    "ReadEntry",
    "Selector",
    "SelectorError",
    "TextEncodeError",
    "TextFile",
    "UndoResult",
    "Verb",
    "atomic_write",
    "check_prior_read",
    "decode_text",
    "encode_text",
    "is_binary",
    "parse_selector",
    "read_text",
    "remove_stale_temps",
    "resolve_path",
    "sniff_binary",
    "split_selector",
    "unescape_shell",
    "write_text",
]
