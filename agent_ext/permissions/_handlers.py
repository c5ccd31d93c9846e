"""Programs whose arguments need more than the generic table: `dd`, `find`, `sed`, `awk`,
`tar`, `curl`, `wget`, `unzip`, editors and `perl`.

Each handler fills an ``Effects`` from the program's arguments (without the program name).
"""

from __future__ import annotations

import re

from ._effects import Arg, Effects, option_spec, scan
from ._sed_script import sed_effects


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


_SED = option_spec("efl", "expression file line-length")


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


_AWK = option_spec("Ffvei", "field-separator assign file source include load exec")


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


_TAR = option_spec("fCIbFgHKLNTVX", "file directory use-compress-program blocking-factor "
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


_CURL = option_spec("odDcKTbeFHuUxXAErwmyYz", "output dump-header cookie-jar config upload-file "
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


_WGET = option_spec("OoaPiBeTtwQUlAR", "output-document output-file append-output "
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
    found = scan(args, option_spec("dxP"))
    out.reads.extend(found.operands[:1])
    if not found.has("-l", "-t", "-p", "-c", "-v", "-z", "-Z"):
        out.writes_into.extend(found.values("-d") or [None])


def _editor(name: str, args: list[Arg], out: Effects) -> None:
    out.runs.append(f"{name} is an editor that can run commands")
    out.writes.extend(a for a in args if a.dynamic or not a.text.startswith(("-", "+")))


def _perl(_name: str, args: list[Arg], out: Effects) -> None:
    found = scan(args, option_spec("eEIMmlx0", ""))
    in_place = any(n == "-i" for n, _ in found.options)
    operands = found.operands
    if not found.has("-e", "-E") and operands:
        out.reads.append(operands[0])
        operands = operands[1:]
    out.reads.extend(operands)
    if in_place:
        out.writes.extend(operands)
