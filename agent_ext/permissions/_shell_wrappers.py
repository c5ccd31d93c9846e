"""Command wrappers (`sudo`, `env`, `timeout`, `xargs`, ...): where the wrapped command starts.

A rule about `git push` must also see `sudo -u root git push`, so each wrapper's options are
parsed just far enough to find the wrapped command. Anything the table does not know stops the
look-through and is reported, so an unknown option never hides a command.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._shell_words import Word


@dataclass(frozen=True)
class WrapperSpec:
    """How one wrapper's options are laid out.

    `flags` take no value, `valued` take one (attached or the next word), `optional` take a
    value only when attached (`-i{}`, `--replace=X`). `operands` counts positional words before
    the wrapped command (the DURATION of `timeout`). `no_command` options mean nothing is run
    (`sudo -l`, `command -v`).
    """

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False
    no_command: frozenset[str] = frozenset()
    numeric_flags: bool = False


def _spec(*, flags: str = "", valued: str = "", optional: str = "", operands: int = 0,
          assignments: bool = False, no_command: str = "",
          numeric_flags: bool = False) -> WrapperSpec:
    return WrapperSpec(frozenset(flags.split()), frozenset(valued.split()),
                       frozenset(optional.split()), operands, assignments,
                       frozenset(no_command.split()), numeric_flags)


WRAPPERS: dict[str, WrapperSpec] = {
    "sudo": _spec(
        flags="-A -b -E -H -n -P -S -B -N -i -s --askpass --background "
              "--set-home --non-interactive --preserve-groups --stdin --bell --login --shell",
        valued="-C -D -g -h -p -R -r -t -T -U -u --close-from --chdir --group --host --prompt "
               "--chroot --role --type --command-timeout --other-user --user",
        optional="--preserve-env", assignments=True,
        no_command="-e --edit -l --list -v --validate -k --reset-timestamp -K "
                   "--remove-timestamp -V --version --help"),
    "doas": _spec(flags="-n -s -L", valued="-u -C", no_command="-C -L"),
    "env": _spec(
        flags="- -i -0 -v --ignore-environment --null --debug",
        valued="-u --unset -C --chdir -P",
        optional="--block-signal --default-signal --ignore-signal",
        assignments=True, no_command="--help --version"),
    "nohup": _spec(no_command="--help --version"),
    "timeout": _spec(flags="--preserve-status --foreground -v --verbose",
                     valued="-k --kill-after -s --signal", operands=1,
                     no_command="--help --version"),
    "time": _spec(flags="-p -a -v -q --append --verbose --portability --quiet",
                  valued="-f -o --format --output", no_command="--help --version -V"),
    "nice": _spec(valued="-n --adjustment", numeric_flags=True, no_command="--help --version"),
    "ionice": _spec(flags="-t --ignore", valued="-c -n --class --classdata -p -P -u --pid "
                    "--pgid --uid", no_command="-p -P -u --pid --pgid --uid --help --version"),
    "stdbuf": _spec(valued="-i -o -e --input --output --error", no_command="--help --version"),
    "command": _spec(flags="-p", no_command="-v -V"),
    "builtin": _spec(),
    "exec": _spec(flags="-c -l", valued="-a"),
    "xargs": _spec(
        flags="-0 -r -t -p -x -o --null --no-run-if-empty --verbose --interactive --exit "
              "--open-tty",
        valued="-a -d -E -I -L -n -P -s --arg-file --delimiter --max-args --max-procs "
               "--max-chars --process-slot-var --max-lines",
        optional="-e -i -l --eof --replace",
        no_command="--help --version --show-limits"),
    "watch": _spec(
        flags="-b -c -d -e -g -t -x -p -r -w --beep --color --no-color --errexit --chgexit "
              "--no-title --exec --precise --no-rerun --no-wrap",
        valued="-n -q --interval --equexit", optional="--differences",
        no_command="--help --version"),
    "caffeinate": _spec(flags="-d -i -m -s -u", valued="-t -w"),
    "unbuffer": _spec(flags="-p"),
    "setsid": _spec(flags="-c -f -w --ctty --fork --wait", no_command="--help --version"),
    "busybox": _spec(no_command="--help --list --list-full --install"),
}


@dataclass
class Unwrapped:
    """The result of looking through one wrapper."""

    inner: list[Word]
    problem: str | None = None
    no_command: bool = False
    options: dict[str, str | None] = field(default_factory=dict)
    split_string: str | None = None
    assignments: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


def _long_name(arg: str) -> tuple[str, str | None]:
    name, eq, value = arg.partition("=")
    return name, (value if eq else None)


def unwrap(name: str, words: list[Word]) -> Unwrapped:
    """Parse wrapper `name`'s options in `words` (argv without the wrapper itself).

    Why: the wrapped command is what a rule has to judge; an option the table does not know,
    or a word only known at run time before the command, makes the split unknowable.
    """
    spec = WRAPPERS[name]
    options: dict[str, str | None] = {}
    out = Unwrapped(inner=[], options=options)
    i, n = 0, len(words)
    operands = spec.operands
    while i < n:
        word = words[i]
        arg = word.text
        if word.dynamic:
            out.problem = f"{name}: cannot tell where the wrapped command starts ({word.source})"
            return out
        if arg == "--":
            i += 1
            break
        if spec.assignments and "=" in arg and not arg.startswith("-"):
            out.assignments.append(arg.partition("=")[0])
            i += 1
            continue
        if arg == "-" and "-" in spec.flags:
            options["-"] = None
            i += 1
            continue
        if spec.numeric_flags and arg[:1] == "-" and arg.lstrip("-").isdigit():
            options["-n"] = arg.lstrip("-")
            i += 1
            continue
        if arg.startswith("--") and len(arg) > 2:
            opt, value = _long_name(arg)
            if opt in spec.flags and value is None:
                options[opt] = None
            elif opt in spec.optional:
                options[opt] = value
            elif opt in spec.valued:
                if value is None:
                    if i + 1 >= n or words[i + 1].dynamic:
                        out.problem = f"{name}: option {opt} has no usable value"
                        return out
                    value = words[i + 1].text
                    i += 1
                options[opt] = value
            elif name == "env" and opt == "--split-string":
                if value is None:
                    if i + 1 >= n or words[i + 1].dynamic:
                        out.problem = "env: --split-string has no usable value"
                        return out
                    value = words[i + 1].text
                    i += 1
                out.split_string = value
                i += 1
                break
            elif opt in spec.no_command:
                out.no_command = True
                return out
            else:
                out.problem = f"{name}: unrecognised option {opt}"
                return out
            if opt in spec.no_command:
                out.no_command = True
                return out
            i += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            j = 1
            consumed_next = False
            while j < len(arg):
                opt = "-" + arg[j]
                rest = arg[j + 1:]
                if name == "env" and opt == "-S":
                    if rest:
                        out.split_string = rest
                    elif i + 1 < n and not words[i + 1].dynamic:
                        out.split_string = words[i + 1].text
                        i += 1
                    else:
                        out.problem = "env: -S has no usable value"
                        return out
                    out.inner = list(words[i + 1:])
                    return out
                if opt in spec.no_command:
                    out.no_command = True
                    return out
                if opt in spec.valued:
                    if rest:
                        options[opt] = rest
                    elif i + 1 < n and not words[i + 1].dynamic:
                        options[opt] = words[i + 1].text
                        consumed_next = True
                    else:
                        out.problem = f"{name}: option {opt} has no usable value"
                        return out
                    break
                if opt in spec.optional:
                    options[opt] = rest
                    break
                if opt in spec.flags:
                    options[opt] = None
                    j += 1
                    continue
                out.problem = f"{name}: unrecognised option {opt}"
                return out
            i += 2 if consumed_next else 1
            continue
        if operands:
            operands -= 1
            options[f"#{spec.operands - operands}"] = arg
            i += 1
            continue
        break
    if out.split_string is not None:
        out.inner = list(words[i:])
        return out
    if operands:
        out.no_command = True
        return out
    out.inner = list(words[i:])
    if name == "time" and ("-o" in options or "--output" in options):
        target = options.get("-o") or options.get("--output")
        if target:
            out.writes.append(target)
    return out
