"""Benchmark of edit matchers: agent_ext's fuzzy matcher against a literal-only one and the seed's.

Run as ``python tests/bench/bench_edit.py``. Every case of the generated corpus
(``edit_corpus.py``) is one ``edit`` call with a garbled old_string; each matcher either lands it
(the file it produces equals the intended one), refuses it, or lands it wrongly (any other file).
A case is right when it lands where landing is expected, or is refused where refusing is expected
(near-duplicate files accept either). The table gives, per matcher, right % and
landed/refused/wrong counts overall and per perturbation kind. ``--wrong`` lists the cases our
matcher got wrong, ``--misses`` those it refused where it should have landed.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from edit_corpus import EditCase, build_corpus, kind_group  # noqa: E402
from seed_matcher import seed_edit  # noqa: E402

from agent_ext.fs.matching import apply_edit, find_edit  # noqa: E402

Matcher = Callable[[str, str, str, bool], "str | None"]


def ours(content: str, old: str, new: str, replace_all: bool) -> str | None:
    """agent_ext's matcher: the edited file, or None when it refuses."""
    result = find_edit(content, old, new, replace_all=replace_all)
    return apply_edit(content, result) if result.ok else None


def literal(content: str, old: str, new: str, replace_all: bool) -> str | None:
    """Exact search only, as an edit tool without any fuzzy matching."""
    count = content.count(old) if old else 0
    if count == 0 or (count > 1 and not replace_all) or old == new:
        return None
    return content.replace(old, new) if replace_all else content.replace(old, new, 1)


MATCHERS: dict[str, Matcher] = {"ours": ours, "literal": literal, "seed": seed_edit}


@dataclass
class Tally:
    """Outcomes of one matcher over a set of cases."""

    total: int = 0
    right: int = 0
    landed: int = 0
    refused: int = 0
    wrong: int = 0

    @property
    def right_pct(self) -> float:
        return 100.0 * self.right / self.total if self.total else 0.0


@dataclass
class Report:
    """Tallies per matcher and per row (``overall`` and each kind), plus the failing cases."""

    tallies: dict[str, dict[str, Tally]] = field(default_factory=dict)
    wrong: dict[str, list[EditCase]] = field(default_factory=lambda: defaultdict(list))
    misses: dict[str, list[EditCase]] = field(default_factory=lambda: defaultdict(list))
    seconds: dict[str, float] = field(default_factory=dict)


def outcome(case: EditCase, result: str | None) -> str:
    """``landed``, ``refused`` or ``wrong``."""
    if result is None:
        return "refused"
    return "landed" if result == case.intended else "wrong"


def is_right(case: EditCase, result: str) -> bool:
    if case.expect == "land":
        return result == "landed"
    if case.expect == "refuse":
        return result == "refused"
    return result in ("landed", "refused")


def evaluate(cases: Sequence[EditCase], matchers: dict[str, Matcher] = MATCHERS) -> Report:
    """Run every matcher over every case."""
    report = Report()
    for name, matcher in matchers.items():
        rows: dict[str, Tally] = defaultdict(Tally)
        began = time.perf_counter()
        for case in cases:
            result = outcome(case, matcher(case.content, case.old, case.new, case.replace_all))
            right = is_right(case, result)
            for row in ("overall", kind_group(case.kind)):
                t = rows[row]
                t.total += 1
                t.right += right
                setattr(t, result, getattr(t, result) + 1)
            if result == "wrong":
                report.wrong[name].append(case)
            elif not right:
                report.misses[name].append(case)
        report.seconds[name] = time.perf_counter() - began
        report.tallies[name] = dict(rows)
    return report


def format_table(report: Report, cases: Sequence[EditCase]) -> str:
    """Right % and landed/refused/wrong per matcher, overall then per kind."""
    names = list(report.tallies)
    expects = Counter(c.expect for c in cases)
    header = f"{'kind':<18}{'cases':>6}" + "".join(
        f"  {name + ' right%':>13} {'L/R/W':>13}" for name in names)
    title = (f"edit benchmark: {len(cases)} cases (expect land {expects['land']}, refuse "
             f"{expects['refuse']}, either {expects['either']})")
    lines = [title, header, "-" * len(header)]
    rows = ["overall", *sorted({kind_group(c.kind) for c in cases})]
    for row in rows:
        first = report.tallies[names[0]][row]
        cells = []
        for name in names:
            t = report.tallies[name][row]
            cells.append(f"  {t.right_pct:>12.1f}% {f'{t.landed}/{t.refused}/{t.wrong}':>13}")
        lines.append(f"{row:<18}{first.total:>6}" + "".join(cells))
        if row == "overall":
            lines.append("-" * len(header))
    timing = ", ".join(f"{n} {1000 * report.seconds[n] / max(1, len(cases)):.2f} ms/case"
                       for n in names)
    lines.append(f"L/R/W = landed at the intended place / refused / landed wrongly. {timing}")
    return "\n".join(lines)


def _show(cases: Sequence[EditCase], name: str) -> None:
    for case in cases:
        result = MATCHERS[name](case.content, case.old, case.new, case.replace_all)
        detail = ""
        if name == "ours":
            detail = find_edit(case.content, case.old, case.new,
                               replace_all=case.replace_all).message
        print(f"--- {case.case_id} ({case.path}, expect {case.expect}) -> {outcome(case, result)}")
        print(f"old: {case.old!r}\nnew: {case.new!r}\n{detail}")


def main(argv: Sequence[str]) -> int:
    cases = build_corpus()
    report = evaluate(cases)
    print(format_table(report, cases))
    if "--wrong" in argv:
        _show(report.wrong["ours"], "ours")
    if "--misses" in argv:
        _show(report.misses["ours"], "ours")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
