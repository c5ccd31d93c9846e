"""Which files a program reads and writes from its arguments, and when it runs other code.

Rules about paths have to see `sort -o out`, `dd if=key`, `tar -cf a.tgz secrets` and
`grep -r TOKEN .` for what they are: a write, a read, a recursive read. Each known program has
an entry saying which options take a value, which option values and operands are read or
written, and which options make a folder operand recursive. Options that make a program run a
command it was handed (`rg --pre`, `tar --to-command`, `git -c core.pager=...`) are recorded as
running code, which an allow rule for the program itself never covers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ._effects import Arg, Effects, Options, option_spec, scan
from ._git import git_effects
from ._handlers import (
    _awk,
    _curl,
    _dd,
    _editor,
    _find,
    _perl,
    _sed,
    _tar,
    _unzip,
    _wget,
)

__all__ = ["Arg", "Effects", "effects"]


# -- the table ----------------------------------------------------------------------------------

Handler = Callable[[str, list[Arg], Effects], None]


@dataclass(frozen=True)
class Program:
    """A table entry: operands read/written, options with file values, recursion."""

    options: Options = field(default_factory=Options)
    #: What operands are: "read", "write", "read write", "copy" (sources read, last written),
    #: "move" (sources read and written, last written), "none".
    operands: str = "read"
    #: Leading operands that are not paths (grep's PATTERN, chmod's MODE).
    skip: int = 0
    #: Options that supply what ``skip`` would (``grep -e PATTERN``): then nothing is skipped.
    unskip: frozenset[str] = frozenset()
    read_options: frozenset[str] = frozenset()
    write_options: frozenset[str] = frozenset()
    recursive_options: frozenset[str] = frozenset()
    recursive: bool = False
    #: Options that make the program run a command it is given.
    code_options: frozenset[str] = frozenset()
    #: Options that turn the operand writes off (``gzip -c`` writes to stdout).
    read_only_options: frozenset[str] = frozenset()


def _program(*, short: str = "", long: str = "", operands: str = "read", skip: int = 0,
             unskip: str = "", reads: str = "", writes: str = "", recursive_options: str = "",
             recursive: bool = False, code: str = "", read_only: str = "") -> Program:
    return Program(option_spec(short, long), operands, skip, frozenset(unskip.split()),
                   frozenset(reads.split()), frozenset(writes.split()),
                   frozenset(recursive_options.split()), recursive, frozenset(code.split()),
                   frozenset(read_only.split()))


_READER = _program()
_GREP = _program(short="efmABCdD", long="regexp file max-count after-context before-context "
                 "context include exclude exclude-dir label color colour devices directories "
                 "binary-files exclude-from", skip=1, unskip="-e -f --regexp --file",
                 reads="-f --file --exclude-from", recursive_options="-r -R --recursive "
                 "--dereference-recursive")
_RG = _program(short="efgtTmABCMjE", long="regexp file glob iglob type type-not max-count "
               "after-context before-context context max-columns threads encoding "
               "ignore-file type-add type-clear sort sortr max-depth max-filesize path-separator "
               "pre pre-glob engine replace colors dfa-size-limit regex-size-limit", skip=1,
               unskip="-e -f --regexp --file", reads="-f --file --ignore-file",
               recursive=True, code="--pre")
_COMPRESSOR = _program(short="S", long="suffix", operands="read write",
                       recursive_options="-r --recursive",
                       read_only="-c --stdout --to-stdout -t --test -l --list")

PROGRAMS: dict[str, Program] = {
    **dict.fromkeys(
        ("cat", "tac", "nl", "less", "more", "most", "bat", "batcat", "xxd", "hexdump", "hd",
         "base64", "base32", "basenc", "strings", "wc", "md5sum", "sha1sum", "sha224sum",
         "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "file", "stat",
         "fold", "fmt", "expand", "unexpand", "rev", "cmp", "comm", "zcat", "gzcat", "bzcat",
         "xzcat", "zstdcat", "lzcat", "zless", "zmore", "zgrep", "iconv", "readlink",
         "realpath", "tr", "shuf", "numfmt", "pr", "tsort", "ptx", "sha3sum", "vis", "view"),
        _READER),
    "head": _program(short="nc", long="lines bytes"),
    "tail": _program(short="ncsF", long="lines bytes sleep-interval pid max-unchanged-stats"),
    "od": _program(short="AjNtwS", long="address-radix skip-bytes read-bytes format width "
                   "strings"),
    "cut": _program(short="bcdf", long="bytes characters delimiter fields output-delimiter"),
    "paste": _program(short="d", long="delimiters"),
    "column": _program(short="csoNRHWEd", long="separator output-separator table-columns"),
    "join": _program(short="aeoejt12", long=""),
    "diff": _program(short="CUIFSDLxXWB", long="context unified ignore-matching-lines "
                     "show-function-line starting-file label exclude exclude-from width "
                     "tabsize horizon-lines line-format from-file to-file color palette",
                     reads="-X --exclude-from --from-file --to-file",
                     recursive_options="-r --recursive"),
    "jq": _program(short="f", long="arg argjson slurpfile rawfile indent from-file "
                   "args jsonargs", skip=1, unskip="-f --from-file",
                   reads="-f --from-file --slurpfile --rawfile"),
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "rg": _RG, "ag": _program(short="AmBCGgf", skip=1, recursive=True),
    "ls": _program(short="wITp", long="width ignore tabsize hide time-style format sort "
                   "color quoting-style indicator-style block-size",
                   recursive_options="-R --recursive"),
    "tree": _program(short="LPIoH", long="charset filelimit timefmt sort", recursive=True,
                     writes="-o"),
    "du": _program(short="BdtX", long="block-size max-depth threshold exclude exclude-from "
                   "time-style files0-from", recursive=True, reads="-X --exclude-from "
                   "--files0-from"),
    "sort": _program(short="ktSToy", long="key field-separator buffer-size temporary-directory "
                     "output parallel batch-size compress-program files0-from random-source",
                     writes="-o --output", reads="--files0-from --random-source",
                     code="--compress-program"),
    "tee": _program(short="", operands="write"),
    "touch": _program(short="dtr", long="date reference time", operands="write",
                      reads="-r --reference"),
    "truncate": _program(short="sr", long="size reference", operands="write",
                         reads="-r --reference"),
    "mkdir": _program(short="m", long="mode context", operands="write"),
    "rmdir": _program(operands="write"),
    "rm": _program(operands="write", recursive_options="-r -R --recursive"),
    "unlink": _program(operands="write"),
    "shred": _program(short="ns", long="iterations size random-source", operands="write"),
    "sponge": _program(operands="write"),
    "chmod": _program(long="reference", operands="write", skip=1, unskip="--reference",
                      recursive_options="-R --recursive"),
    "chown": _program(long="reference from", operands="write", skip=1, unskip="--reference",
                      recursive_options="-R --recursive"),
    "chgrp": _program(long="reference", operands="write", skip=1, unskip="--reference",
                      recursive_options="-R --recursive"),
    "cp": _program(short="StT", long="suffix target-directory backup sparse reflink "
                   "preserve no-preserve context", operands="copy",
                   writes="-t --target-directory", recursive_options="-r -R -a --recursive "
                   "--archive"),
    "mv": _program(short="StT", long="suffix target-directory backup context",
                   operands="move", writes="-t --target-directory"),
    "ln": _program(short="StT", long="suffix target-directory backup", operands="link",
                   writes="-t --target-directory"),
    "install": _program(short="gmoStT", long="group mode owner suffix target-directory "
                        "strip-program context backup", operands="copy",
                        writes="-t --target-directory", code="--strip-program -s --strip"),
    "rsync": _program(short="efTB", long="rsh rsync-path filter exclude include exclude-from "
                      "include-from files-from temp-dir partial-dir backup-dir suffix "
                      "compare-dest copy-dest link-dest log-file password-file chmod "
                      "out-format block-size max-size min-size timeout port sockopts "
                      "info debug", operands="copy", recursive_options="-r -a --recursive "
                      "--archive", reads="--exclude-from --include-from --files-from "
                      "--password-file", writes="--log-file", code="-e --rsh --rsync-path"),
    "scp": _program(short="cFiJlopSoP", operands="copy", recursive_options="-r",
                    code="-o -S -J -F"),
    "gzip": _COMPRESSOR, "gunzip": _COMPRESSOR, "bzip2": _COMPRESSOR, "bunzip2": _COMPRESSOR,
    "xz": _COMPRESSOR, "unxz": _COMPRESSOR, "lzma": _COMPRESSOR, "unlzma": _COMPRESSOR,
    "zstd": _program(short="oSD", long="output suffix", operands="read write", writes="-o",
                     recursive_options="-r", read_only="-c --stdout -t --test -l --list"),
    "unzstd": _COMPRESSOR, "lz4": _COMPRESSOR, "compress": _COMPRESSOR,
    "uncompress": _COMPRESSOR, "brotli": _COMPRESSOR,
    "zip": _program(short="bnPtx", long="temp-path suffixes password exclude unzip-command",
                    operands="archive", recursive_options="-r -R --recurse-paths",
                    code="-TT --unzip-command"),
    "split": _program(short="abCdlnt", long="suffix-length additional-suffix bytes "
                      "line-bytes lines number separator filter", operands="split",
                      code="--filter"),
    "csplit": _program(short="bfn", long="suffix-format prefix digits", operands="csplit"),
    "uniq": _program(short="fsw", long="skip-fields skip-chars check-chars", operands="uniq"),
    "patch": _program(short="BDFiopr", long="prefix ifdef fuzz input output strip "
                      "reject-file directory backup-if-mismatch", operands="write",
                      reads="-i --input", writes="-o --output -r --reject-file"),
    "ssh": _program(short="BbcDEeFIiJLlmOoPpQRSWw", operands="none", code="-o -F"),
    "sftp": _program(short="BbcDFiJloPRSs", operands="none", code="-o -F -S -D"),
    "man": _program(short="PHMLSCRm", long="pager html manpath config-file",
                    operands="none", code="-P --pager -H --html"),
}
#: Programs that run a command they are handed (no rule about them can see which).
COMMAND_RUNNERS = frozenset({
    "flock", "chroot", "strace", "ltrace", "valgrind", "gdb", "lldb", "parallel", "entr",
    "unshare", "nsenter", "firejail", "bwrap", "proot", "torsocks", "proxychains",
    "proxychains4", "fakeroot", "faketime", "sg", "newgrp", "systemd-run", "script", "expect",
    "at", "batch", "crontab", "tmux", "screen", "chronic", "ifne", "run-parts", "perf",
    "catchsegv", "setarch", "linux32", "linux64", "taskset", "chrt", "prlimit", "numactl",
    "cgexec", "schroot", "pkexec", "dbus-launch", "xvfb-run", "with-contenv", "s6-setuidgid",
})
EDITORS = frozenset({"vi", "vim", "nvim", "ex", "ed", "red", "emacs", "nano", "pico", "joe",
                     "micro", "kak", "hx", "mg", "jed"})


def _generic(name: str, args: list[Arg], out: Effects) -> None:
    spec = PROGRAMS[name]
    found = scan(args, spec.options)
    operands = found.operands
    if spec.skip and not found.has(*spec.unskip):
        operands = operands[spec.skip:]
    for option in spec.code_options & {n for n, _ in found.options}:
        out.runs.append(f"{name} {option} runs a command it is given")
    out.reads += found.values(*spec.read_options)
    out.writes += found.values(*spec.write_options)
    recursive = spec.recursive or found.has(*spec.recursive_options)
    role = spec.operands
    if found.has(*spec.read_only_options) and role == "read write":
        role = "read"
    if not operands and recursive and role == "read" and name not in ("tree",):
        operands = [Arg(".")]
    if role in ("read", "read write"):
        (out.recursive_reads if recursive else out.reads).extend(operands)
    if role in ("write", "read write"):
        (out.recursive_writes if recursive else out.writes).extend(operands)
    if role in ("copy", "move", "link"):
        target = found.values("-t", "--target-directory")
        single = role == "link" and len(operands) == 1
        sources = operands if target or single else operands[:-1]
        dest = [] if target or single else operands[-1:]
        if role == "link":
            sources = sources + _link_targets(sources, [*dest, *target])
        (out.recursive_reads if recursive else out.reads).extend(sources)
        if role in ("move", "link"):
            # Writes through a link land on its target, so a link counts as writing it.
            out.recursive_writes.extend(sources)
        if role == "link" and len(operands) == 1:
            out.writes_into.append(None)
        (out.recursive_writes if recursive or role == "move" else out.writes).extend(dest)
        for folder in target:
            out.writes_into.append(folder)
    elif role == "archive":
        out.writes.extend(operands[:1])
        (out.recursive_reads if recursive else out.reads).extend(operands[1:])
    elif role == "split":
        out.reads.extend(operands[:1])
        out.writes_into.append(_folder_of(operands[1]) if len(operands) > 1 else None)
    elif role == "csplit":
        out.reads.extend(operands[:1])
        prefix = found.values("-f", "--prefix")
        out.writes_into.append(_folder_of(prefix[-1]) if prefix else None)
    elif role == "uniq":
        out.reads.extend(operands[:1])
        out.writes.extend(operands[1:2])
    if name == "patch" and not operands:
        out.writes_into.extend(found.values("-d", "--directory") or [None])


def _link_targets(sources: list[Arg], places: list[Arg]) -> list[Arg]:
    """Where relative link targets point: from the link's folder, not the cwd (the link is
    ``place`` itself or an entry inside it, so both readings are kept)."""
    out = []
    for source in sources:
        if source.dynamic or source.text.startswith(("/", "~")):
            continue
        for place in places:
            folder = place.text.rstrip("/")
            out.append(Arg(f"{folder}/{source.text}", place.dynamic, place.globbed))
            if "/" in folder:
                parent = folder.rsplit("/", 1)[0]
                out.append(Arg(f"{parent}/{source.text}", place.dynamic, place.globbed))
    return out


def _folder_of(arg: Arg) -> Arg:
    head = arg.text.rsplit("/", 1)[0] if "/" in arg.text else "."
    return Arg(head or "/", arg.dynamic, arg.globbed)


def _less(name: str, args: list[Arg], out: Effects) -> None:
    commands = [a for a in args if not a.dynamic and a.text.startswith("+")]
    if commands or any(a.dynamic or a.text.startswith(("-k", "--lesskey")) for a in args):
        out.runs.append(f"{name} runs the commands it is given (`+`, lesskey), which can "
                        "include shell escapes")
    _generic(name, [a for a in args if a not in commands], out)


HANDLERS: dict[str, Handler] = {
    "dd": _dd, "find": _find, "sed": _sed, "gsed": _sed, "awk": _awk, "gawk": _awk,
    "mawk": _awk, "nawk": _awk, "tar": _tar, "gtar": _tar, "bsdtar": _tar, "curl": _curl,
    "wget": _wget, "unzip": _unzip, "perl": _perl, "less": _less, "more": _less,
    **dict.fromkeys(EDITORS, _editor),
}


def effects(argv: tuple[str, ...], dynamic: tuple[bool, ...],
            globbed: tuple[bool, ...] = ()) -> Effects:
    """What the simple command ``argv`` reads, writes and runs (see the module docstring)."""
    if not argv or dynamic[0]:
        return Effects(known=False)
    name = argv[0].rstrip("/").rsplit("/", 1)[-1]
    flags = list(globbed) + [False] * (len(argv) - len(globbed))
    args = [Arg(text, dyn, glob) for text, dyn, glob in zip(argv[1:], dynamic[1:], flags[1:],
                                                            strict=False)]
    out = Effects()
    if name == "git":
        git_effects(args, out)
    elif name in HANDLERS:
        HANDLERS[name](name, args, out)
    elif name in PROGRAMS:
        _generic(name, args, out)
    elif name in COMMAND_RUNNERS:
        out.runs.append(f"{name} runs a command it is given")
        out.known = False
    else:
        out.known = False
    return out

