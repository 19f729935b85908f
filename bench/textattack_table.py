"""The table of bench/textattack_loop.py's runs in docs/performance.md, kept apart from
the loop so that it renders (and its test runs) without TextAttack installed.

``docs/textattack.json`` holds, per constraint setting and search, each loop's median
run (:class:`Measured`); :func:`blocks` renders the page's generated block
``textattack``, :func:`readme_block` the README's ``textattack-summary``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "textattack.json"
DOC = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"

#: The constraint settings compared: the syntax check, and the cheap budget check in its
#: place (an empty constraint list would mean the default, ``syntax:0.2``).
MODES: dict[str, tuple[str, ...]] = {"syntax:0.2": ("syntax:0.2",), "budget only": ("budget",)}


@dataclass(frozen=True)
class Measured:
    """One loop's run.

    Attributes:
        sentences: sentences attacked.
        candidates: distinct sentences the probes' model evaluated, clean ones included.
        seconds: wall-clock seconds of the run.
        search_seconds: brittle's seconds to the end of its last sentence's search
            (the searches with their tables, and every chunk's rows but the last one's;
            not the summary, plots and report.html written after it), what
            TextAttack's seconds time (``None`` for TextAttack, and for runs measured
            before it was recorded).
        uuas: mean UUAS drop of the perturbations kept.
        damage: mean damage (the objective) of the perturbations kept.
        best_scored: mean of each sentence's most damaging candidate scored (TextAttack;
            ``None`` for brittle, which keeps it).
        checked: candidates whose constraints were checked.
        own_queries: TextAttack's own query count (cache hits and duplicates included;
            ``None`` for brittle, whose own count is ``candidates``).
        left_out: table options the TextAttack transformation could not offer.
    """

    sentences: int
    candidates: int
    seconds: float
    uuas: float
    damage: float
    best_scored: float | None = None
    checked: int = 0
    own_queries: int | None = None
    left_out: int = 0
    search_seconds: float | None = None


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """docs/performance.md's block ``textattack``: per constraint setting and search,
    both loops' candidates per second (brittle's over its whole run and over its search
    alone), their ratios and their mean UUAS drops."""
    lines = [
        "| constraint | search | brittle candidates/s, whole run | brittle candidates/s, "
        "search | TextAttack candidates/s | brittle / TextAttack, whole run "
        "| brittle / TextAttack, search | brittle UUAS drop | TextAttack UUAS drop |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode, searches in data["modes"].items():
        for search, loops in searches.items():
            b, t = Measured(**loops["brittle"]), Measured(**loops["TextAttack"])
            b_rate, t_rate = b.candidates / b.seconds, t.candidates / t.seconds
            if b.search_seconds is None:
                alone = ratio = "-"
            else:
                rate = b.candidates / b.search_seconds
                alone, ratio = f"{rate:,.0f}", f"{rate / t_rate:.2f}x"
            lines.append(
                f"| `{mode}` | {search} | {b_rate:,.0f} | {alone} | {t_rate:,.0f} "
                f"| {b_rate / t_rate:.2f}x | {ratio} | {b.uuas:.4f} | {t.uuas:.4f} |"
            )
    return {"textattack": "\n".join(lines) + "\n"}


def _ratio(loops: dict[str, Any], *, search_alone: bool = False) -> float:
    """brittle's candidates per second over TextAttack's, from one search's two runs
    (``search_alone``: brittle's seconds to the end of its last search, when recorded)."""
    b, t = Measured(**loops["brittle"]), Measured(**loops["TextAttack"])
    seconds = b.search_seconds if search_alone and b.search_seconds is not None else b.seconds
    return (b.candidates / seconds) / (t.candidates / t.seconds)


def readme_block(data: dict[str, Any]) -> dict[str, str]:
    """The README's block ``textattack-summary``: brittle's beam search against the
    TextAttack loop's, with the syntax check and with the budget check only (nothing
    when a run measured only one of them)."""
    modes = data["modes"]
    if any(mode not in modes for mode in MODES):
        return {}
    checked, budget = _ratio(modes["syntax:0.2"]["beam"]), _ratio(modes["budget only"]["beam"])
    text = (
        f"brittle scores {checked:.2f} times the candidates per second in beam search with "
        f"the syntax check and {budget:.2f} times without it, on these 2 cores"
    )
    if modes["budget only"]["beam"]["brittle"].get("search_seconds") is not None:
        alone = _ratio(modes["budget only"]["beam"], search_alone=True)
        text += (
            f" ({alone:.2f} times without it when both are timed to the end of their last "
            "search, before brittle writes its reports)"
        )
    return {"textattack-summary": text + ".\n"}
