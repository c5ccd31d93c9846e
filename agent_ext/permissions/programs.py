"""Which files a program reads and writes from its arguments, and when it runs other code.

Rules about paths have to see `sort -o out`, `dd if=key`, `tar -cf a.tgz secrets` and
`grep -r TOKEN .` for what they are: a write, a read, a recursive read. Each known program has
an entry saying which options take a value, which option values and operands are read or
written, and which options make a folder operand recursive. Options that make a program run a
command it was handed (`rg --pre`, `tar --to-command`, `git -c core.pager=...`) are recorded as
running code, which an allow rule for the program itself never covers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ._effects import Arg, Effects
from ._git import git_effects
from ._sed_script import sed_effects

__all__ = ["Arg", "Effects", "effects"]


# -- option scanning ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Options:
    """How one program's options are laid out: which short letters and long names take a
    value (attached, after ``=``, or the next word)."""

    short: str = ""
    long: frozenset[str] = frozenset()


def _options(short: str = "", long: str = "") -> Options:
    return Options(short, frozenset(long.split()))


@dataclass
class Scan:
    """Options (name and value) and operands, in order."""

    options: list[tuple[str, Arg | None]] = field(default_factory=list)
    operands: list[Arg] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[Arg]:
        return [value for name, value in self.options if name in names and value is not None]


def scan(args: list[Arg], spec: Options) -> Scan:
    """Split ``args`` into options and operands the way getopt_long does (GNU permutes)."""
    out = Scan()
    index = 0
    while index < len(args):
        arg = args[index]
        text = arg.text
        index += 1
        if arg.dynamic or not text.startswith("-") or text == "-":
            out.operands.append(arg)
            continue
        if text == "--":
            out.operands.extend(args[index:])
            break
        if text.startswith("--"):
            name, eq, _ = text.partition("=")
            if eq:
                out.options.append((name, arg.after(len(name) + 1)))
            elif name[2:] in spec.long and index < len(args):
                out.options.append((name, args[index]))
                index += 1
            else:
                out.options.append((name, None))
            continue
        for position in range(1, len(text)):
            letter = text[position]
            if letter in spec.short:
                if position + 1 < len(text):
                    out.options.append(("-" + letter, arg.after(position + 1)))
                elif index < len(args):
                    out.options.append(("-" + letter, args[index]))
                    index += 1
                else:
                    out.options.append(("-" + letter, None))
                break
            out.options.append(("-" + letter, None))
    return out


# -- the table ----------------------------------------------------------------------------------

Handler = Callable[[str, list[Arg], Effects], None]


@dataclass(frozen=True)
class Program:
    """A table entry: operands read/written, options with file values, recursion."""

    options: Options = Options()
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
    return Program(_options(short, long), operands, skip, frozenset(unskip.split()),
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
        sources = operands if target else operands[:-1]
        dest = [] if target else operands[-1:]
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


def _folder_of(arg: Arg) -> Arg:
    head = arg.text.rsplit("/", 1)[0] if "/" in arg.text else "."
    return Arg(head or "/", arg.dynamic, arg.globbed)


def _dd(_name: str, args: list[Arg], out: Effects) -> None:
    for arg in args:
        key = arg.text.partition("=")[0]
        if arg.dynamic and "=" not in arg.text:
            out.reads.append(arg)
        elif key == "if":
            out.reads.append(arg.after(3))
        elif key == "of":
            out.writes.append(arg.after(3))


_FIND_VALUED = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-mtime", "-atime",
    "-ctime", "-mmin", "-amin", "-cmin", "-newer", "-anewer", "-cnewer", "-maxdepth",
    "-mindepth", "-links", "-inum", "-samefile", "-lname", "-ilname", "-used", "-fstype",
    "-context", "-regextype", "-printf", "-newerXY", "-files0-from",
})
_FIND_WRITE_FILE = frozenset({"-fprint", "-fprint0", "-fls"})


def _find(_name: str, args: list[Arg], out: Effects) -> None:
    """Start points are read recursively; -delete writes them, -fprint* write a file.

    -exec and friends are analysed by the shell walker as commands of their own.
    """
    starts: list[Arg] = []
    index = 0
    while index < len(args) and (args[index].dynamic or not (
            args[index].text.startswith(("-", "(", "!")) or args[index].text in ("(", "!"))):
        starts.append(args[index])
        index += 1
    starts = starts or [Arg(".")]
    out.recursive_reads.extend(starts)
    rest = args[index:]
    for position, arg in enumerate(rest):
        nxt = rest[position + 1] if position + 1 < len(rest) else None
        if arg.text == "-delete":
            out.recursive_writes.extend(starts)
        elif arg.text in (*_FIND_WRITE_FILE, "-fprintf") and nxt is not None:
            out.writes.append(nxt)
        elif arg.text in ("-files0-from",) and nxt is not None:
            out.reads.append(nxt)
        elif arg.dynamic and position and rest[position - 1].text not in _FIND_VALUED:
            out.runs.append("find expression only known at run time")


_SED = _options("efl", "expression file line-length")


def _sed(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _SED)
    scripts = found.values("-e", "--expression")
    operands = found.operands
    files = found.values("-f", "--file")
    out.reads.extend(files)
    if files:
        out.runs.append("sed runs a script file")
    if not scripts and not files and operands:
        scripts, operands = [operands[0]], operands[1:]
    in_place = any(n in ("-i", "--in-place") for n, _ in found.options)
    sandbox = found.has("--sandbox")
    for script in scripts:
        if script.dynamic:
            out.runs.append("sed script only known at run time")
            continue
        effect = sed_effects(script.text)
        if not sandbox:
            out.reads += [Arg(f) for f in effect.reads]
            out.writes += [Arg(f) for f in effect.writes]
            out.runs += effect.runs
    out.reads.extend(operands)
    if in_place:
        out.writes.extend(operands)


_AWK = _options("Ffvei", "field-separator assign file source include load exec")


def _awk(name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _AWK)
    programs = found.values("-e", "--source")
    operands = found.operands
    files = found.values("-f", "--file", "-i", "--include", "--exec", "-E")
    if files or found.has("-l", "--load"):
        out.reads.extend(files)
        out.runs.append(f"{name} runs a program file")
    if not programs and not files and operands:
        programs, operands = [operands[0]], operands[1:]
    for program in programs:
        if program.dynamic:
            out.runs.append(f"{name} program only known at run time")
            continue
        out.runs.extend(awk_effects(program.text, name))
        if awk_writes(program.text):
            out.writes_into.append(Arg("/"))
    out.reads.extend(a for a in operands if a.dynamic or "=" not in a.text)


def _strip_strings(program: str) -> str:
    out, quote, i = [], "", 0
    while i < len(program):
        ch = program[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch == '"':
            quote = ch
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def awk_effects(program: str, name: str = "awk") -> list[str]:
    """Why an awk program runs commands: ``system()``, pipes, ``getline < file``."""
    plain = _strip_strings(program).replace("||", "")
    found = []
    if "system" in plain:
        found.append(f"{name} program calls system()")
    if "|" in plain:
        found.append(f"{name} program pipes to or from a command")
    if "getline" in plain and "<" in plain:
        found.append(f"{name} program reads a file named at run time")
    return found


def awk_writes(program: str) -> bool:
    """Whether an awk program redirects output (``print > file``): the name is computed."""
    return bool(re.search(r"\b(?:print|printf)\b[^;{}\n]*>", _strip_strings(program)))


_TAR = _options("fCIbFgHKLNTVX", "file directory use-compress-program blocking-factor "
                "info-script new-volume-script listed-incremental format newer after-date "
                "starting-file files-from label exclude exclude-from to-command rsh-command "
                "checkpoint-action transform owner group mode mtime suffix")


def _tar(_name: str, args: list[Arg], out: Effects) -> None:
    if args and not args[0].dynamic and args[0].text[:1] not in ("-", "") and (
            args[0].text.isalpha()):
        args = [Arg("-" + args[0].text), *args[1:]]
    found = scan(args, _TAR)
    names = {n for n, _ in found.options}
    code = names & {"-I", "--use-compress-program", "--to-command", "--rsh-command",
                    "-F", "--info-script", "--new-volume-script", "--checkpoint-action"}
    out.runs += [f"tar {option} runs a command it is given" for option in sorted(code)]
    archives = found.values("-f", "--file")
    folders = found.values("-C", "--directory")
    out.reads += found.values("-T", "--files-from", "-X", "--exclude-from")
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"}:
        out.writes.extend(archives)
        # -C moves before reading the operands: the folder itself is what may be read.
        out.recursive_reads.extend(folders or found.operands)
    elif names & {"-x", "--extract", "--get"}:
        out.reads.extend(archives)
        out.writes_into.extend(folders or [None])
    else:
        out.reads.extend(archives)


_CURL = _options("odDcKTbeFHuUxXAErwmyYz", "output dump-header cookie-jar config upload-file "
                 "cookie referer form header user proxy request user-agent write-out "
                 "max-time trace trace-ascii stderr output-dir data data-binary data-raw "
                 "data-urlencode cert key cacert capath netrc-file")


def _curl(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _CURL)
    out.writes += found.values("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar",
                               "--trace", "--trace-ascii", "--stderr")
    out.reads += found.values("-K", "--config", "-T", "--upload-file", "--netrc-file",
                              "--cert", "--key")
    for value in found.values("-d", "--data", "--data-binary", "-F", "--form",
                              "--data-urlencode"):
        at = value.text.find("@")
        if value.dynamic:
            out.reads.append(value)
        elif at >= 0 and (at == 0 or value.text[:at].isidentifier() or "=" in value.text[:at]):
            out.reads.append(value.after(at + 1))
    if found.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        out.writes_into.extend(found.values("--output-dir") or [None])


_WGET = _options("OoaPiBeTtwQUlAR", "output-document output-file append-output "
                 "directory-prefix input-file base execute timeout tries wait quota "
                 "user-agent level accept reject post-file body-file load-cookies "
                 "save-cookies")


def _wget(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _WGET)
    documents = found.values("-O", "--output-document")
    out.writes += [d for d in documents if d.text != "-"]
    out.writes += found.values("-o", "--output-file", "-a", "--append-output",
                               "--save-cookies")
    out.reads += found.values("-i", "--input-file", "--post-file", "--body-file",
                              "--load-cookies")
    if not documents:
        out.writes_into.extend(found.values("-P", "--directory-prefix") or [None])
    if found.has("-e", "--execute"):
        out.runs.append("wget -e runs wgetrc commands")


def _unzip(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _options("dxP"))
    out.reads.extend(found.operands[:1])
    if not found.has("-l", "-t", "-p", "-c", "-v", "-z", "-Z"):
        out.writes_into.extend(found.values("-d") or [None])


def _editor(name: str, args: list[Arg], out: Effects) -> None:
    out.runs.append(f"{name} is an editor that can run commands")
    out.writes.extend(a for a in args if a.dynamic or not a.text.startswith(("-", "+")))


def _perl(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, _options("eEIMmlx0", ""))
    in_place = any(n == "-i" for n, _ in found.options)
    operands = found.operands
    if not found.has("-e", "-E") and operands:
        out.reads.append(operands[0])
        operands = operands[1:]
    out.reads.extend(operands)
    if in_place:
        out.writes.extend(operands)


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

