"""Damage against validity: several presets or generators attacked on one treebank.

The question brittle answers is how much syntax-keeping change damages a probe; a
drop means little without how valid the changes were. :func:`run_frontier` attacks
the same sentences with each entry (a validity preset, ``--validity``, or a plain
generator with its default constraints), grades every kept perturbation
(:mod:`brittle.search.validity`) and measures its surprisal increase, and
:func:`write_frontier` writes one row per entry: the worst-case drop of the
objective, the share of kept perturbations valid at each level, the drop that the
tree-valid ones alone did (an invalid one counting as none), and the surprisal
increase, as ``frontier.json``, ``frontier.md``, ``frontier.png`` (drop against the
share tree-valid, and against the surprisal increase) and ``frontier.html``. Each
entry's attack directory is ``OUT/NAME`` (a whole attack report, resumable).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol

from brittle.engine.attack import (
    AttackComponents,
    AttackConfig,
    build_components,
    build_generator,
    run_attack,
)
from brittle.engine.attack.assembly import TableMemo
from brittle.engine.core.atomic import atomic_write, check_output, output_set, write_json
from brittle.engine.core.errors import ConfigError
from brittle.engine.reports.html_report import (
    code_spans,
    figure_png,
    html_table,
    png_figure,
    static_page,
)
from brittle.engine.reports.report import LEVELS, Summary, changed_sentences
from brittle.search.presets import PRESETS

__all__ = [
    "HEADER",
    "LEGEND",
    "AttackRunner",
    "FrontierEntry",
    "FrontierRow",
    "entries_of",
    "frontier_row",
    "place_labels",
    "row_cells",
    "run_frontier",
    "write_frontier",
]

JSON_NAME = "frontier.json"
MARKDOWN_NAME = "frontier.md"
PLOT_NAME = "frontier.png"
HTML_NAME = "frontier.html"


@dataclass(frozen=True)
class FrontierEntry:
    """One attack of the frontier.

    Attributes:
        name: its row's name and its directory under the output (a preset's or a
            generator's name).
        config: its attack settings.
        level: what it keeps by construction (a preset's level; ``None``: a plain
            generator, which promises nothing).
    """

    name: str
    config: AttackConfig
    level: str | None = None


def entries_of(
    base: AttackConfig, presets: Sequence[str], methods: Sequence[str]
) -> list[FrontierEntry]:
    """The entries for ``presets`` (``--validity`` names) and plain ``methods``, each
    with ``base``'s treebank, probes, search, budget and limits.

    Raises:
        ConfigError: an unknown preset or method, a name given twice, or none at all.
    """
    entries = []
    for name in presets:
        preset = PRESETS.get(name)
        entries.append(FrontierEntry(name, base.with_preset(preset), preset.level))
    for method in methods:
        entries.append(FrontierEntry(method, replace(base, method=method, constraints=())))
    names = [e.name for e in entries]
    if not names:
        raise ConfigError("give at least one --presets or --methods entry")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{', '.join(repeated)} given twice")
    return entries


class AttackRunner(Protocol):
    """Runs one entry's attack (:func:`~brittle.engine.attack.run_attack` has this
    shape; the command line passes a wrapper that shows progress)."""

    def __call__(
        self,
        config: AttackConfig,
        out: Path,
        *,
        resume: bool,
        overwrite: bool,
        components: AttackComponents,
        quality: bool,
        grade: bool,
        device: str | None,
    ) -> Summary: ...


@dataclass(frozen=True)
class FrontierRow:
    """What one entry did.

    Attributes:
        name, level: the entry's (``level``: ``None`` for a plain generator).
        method: the generator.
        sentences: sentences attacked; ``changed``: those with a kept perturbation.
        drop: the mean worst-case drop of the objective (the mean over its metrics of
            each metric's mean drop over the attacked sentences).
        valid: per level (``tree``, ``grammatical``, ``meaning``), the share of the
            kept perturbations the judges grade valid.
        valid_drop: per level, the objective's mean drop when a perturbation not valid
            at that level counts as none.
        surprisal_increase: the kept perturbations' mean LM surprisal increase, bits
            per word.
        query_budget_hits: sentences whose search stopped at the query budget.
    """

    name: str
    level: str | None
    method: str
    sentences: int
    changed: int
    drop: float | None
    valid: Mapping[str, float | None]
    valid_drop: Mapping[str, float | None]
    surprisal_increase: float | None
    query_budget_hits: int | None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 6) if known else None


def frontier_row(entry: FrontierEntry, summary: Summary) -> FrontierRow:
    """The row of ``entry`` from its attack's summary."""
    metrics = summary["objective"] or list(summary["tasks"])
    drop = _mean([summary["tasks"][m]["mean_drop"] for m in metrics if m in summary["tasks"]])
    validity = summary.get("validity")
    valid: dict[str, float | None] = {level: None for level in LEVELS}
    valid_drop: dict[str, float | None] = {level: None for level in LEVELS}
    if validity is not None:
        valid = dict(validity["shares"])
        for level in LEVELS:
            by_task = validity["mean_drop_valid"][level]
            valid_drop[level] = _mean([by_task.get(m) for m in metrics])
    return FrontierRow(
        name=entry.name,
        level=entry.level,
        method=entry.config.method,
        sentences=summary["sentences"],
        changed=changed_sentences(summary),
        drop=drop,
        valid=valid,
        valid_drop=valid_drop,
        surprisal_increase=summary["mean_surprisal_increase"],
        query_budget_hits=summary.get("query_budget_hits"),
    )


def run_frontier(
    entries: Sequence[FrontierEntry],
    out: str | os.PathLike[str],
    *,
    resume: bool = False,
    device: str | None = None,
    on_entry: Callable[[FrontierEntry], None] | None = None,
    run: AttackRunner = run_attack,
) -> list[FrontierRow]:
    """Attack with each entry into ``OUT/NAME``, grading and measuring the kept
    perturbations; the rows in entry order. The probes and the encoder load once
    (:func:`~brittle.engine.attack.build_components` reuses them across entries).

    Args:
        entries: what to attack with (:func:`entries_of`).
        out: the output directory.
        resume: continue entries an earlier run left unfinished (else they start again).
        device: torch device of the models.
        on_entry: called before each entry's attack (progress).
        run: the attack to run (:func:`~brittle.engine.attack.run_attack`; a caller
            with progress passes its own wrapper of it).
    """
    check_output(out, directory=True)
    rows = []
    components: AttackComponents | None = None
    for entry in entries:
        if on_entry is not None:
            on_entry(entry)
        components = _components(entry.config, components, device)
        summary = run(
            entry.config,
            Path(out) / entry.name,
            resume=resume,
            overwrite=not resume,
            components=components,
            quality=True,
            grade=True,
            device=device,
        )
        rows.append(frontier_row(entry, summary))
    return rows


def _components(
    config: AttackConfig, previous: AttackComponents | None, device: str | None
) -> AttackComponents:
    """The components of an entry: the previous entry's probes, model and parser, with
    the entry's own generator, constraints and strategy (and tables of its own)."""
    if previous is None:
        return build_components(config, device=device)
    generator = build_generator(config)
    generator.prepare()
    kept = build_components(config, reuse=previous, device=device)
    return replace(kept, generator=generator, tables=TableMemo(enabled=False))


# ------------------------------------------------------------------ reports
def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


HEADER = [
    "entry",
    "keeps",
    "changed",
    "drop",
    "tree-valid",
    "grammatical",
    "meaning",
    "valid drop",
    "surprisal",
]
LEGEND = (
    "keeps: what the entry keeps by construction (a preset's level; - for a plain "
    "generator); drop: the mean worst-case drop of the attack's objective over the "
    "attacked sentences; tree-valid, grammatical, meaning: the share of the kept "
    "perturbations brittle's judges grade valid at that level (docs/validity.md); valid "
    "drop: the same drop when a perturbation that is not tree-valid counts as none; "
    "surprisal: the kept perturbations' increase in bits per word under the bundled "
    "causal LM."
)


def row_cells(row: FrontierRow) -> list[str]:
    """The table cells of ``row``, in :data:`HEADER` order."""
    return [
        row.name,
        row.level or "-",
        f"{row.changed}/{row.sentences}",
        _fmt(row.drop),
        _fmt(row.valid["tree"], ".0%"),
        _fmt(row.valid["grammatical"], ".0%"),
        _fmt(row.valid["meaning"], ".0%"),
        _fmt(row.valid_drop["tree"]),
        _fmt(row.surprisal_increase, "+.2f"),
    ]


def markdown_report(rows: Sequence[FrontierRow], settings: str) -> str:
    """``frontier.md``: the settings, the table and its legend."""
    lines = [
        "# Damage against validity",
        "",
        settings,
        "",
        "| " + " | ".join(HEADER) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in HEADER[2:]) + " |",
        *("| " + " | ".join(row_cells(r)) + " |" for r in rows),
        "",
        LEGEND,
        "",
    ]
    return "\n".join(lines)


#: Where a point's name may go, in points from the point, in order of preference: right
#: above, right below, left above, left below, then further up and down.
_OFFSETS = ((4, 4), (4, -11), (-4, 4), (-4, -11), (4, 14), (4, -21), (-4, 14), (-4, -21))
#: The line from a name set further off (not one of the first four offsets) to its point.
_LEADER: dict[str, object] = {"arrowstyle": "-", "lw": 0.6, "color": "0.45", "shrinkB": 3}
#: Name size in points, and the width of one character of it (an estimate: the names
#: are short lowercase words).
_FONT = 8
_CHAR_WIDTH = 0.62 * _FONT


def _box(x: float, y: float, dx: float, dy: float, name: str) -> tuple[float, float, float, float]:
    """The box (left, bottom, right, top, in points) a name takes when written at offset
    ``(dx, dy)`` from a point at ``(x, y)`` (points), left-aligned for a right offset
    and right-aligned for a left one."""
    width = _CHAR_WIDTH * len(name)
    left = x + dx if dx >= 0 else x + dx - width
    return (left, y + dy, left + width, y + dy + _FONT)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _outside(
    box: tuple[float, float, float, float], bounds: tuple[float, float, float, float] | None
) -> bool:
    if bounds is None:
        return False
    return box[0] < bounds[0] or box[1] < bounds[1] or box[2] > bounds[2] or box[3] > bounds[3]


def place_labels(
    points: Sequence[tuple[float, float]],
    names: Sequence[str],
    bounds: tuple[float, float, float, float] | None = None,
) -> list[tuple[float, float]]:
    """An offset (points) for each name beside its point (given in points), chosen
    greedily in order: the first of :data:`_OFFSETS` whose box meets the fewest names
    placed already and other points (6-point squares), none where it can; a box that
    leaves ``bounds`` (left, bottom, right, top: the axes, in points) counts as two
    clashes. Names of
    points that sit together then stand apart ("coco" and "meaning", both at a drop of
    0.015 and full validity)."""
    dots = [(x - 3, y - 3, x + 3, y + 3) for x, y in points]
    placed: list[tuple[float, float, float, float]] = []
    out: list[tuple[float, float]] = []
    for k, ((x, y), name) in enumerate(zip(points, names, strict=True)):
        others = [d for j, d in enumerate(dots) if j != k]

        boxes = [_box(x, y, dx, dy, name) for dx, dy in _OFFSETS]
        clashes = [
            sum(_overlaps(box, b) for b in (*placed, *others)) + 2 * _outside(box, bounds)
            for box in boxes
        ]
        best = _OFFSETS[min(range(len(_OFFSETS)), key=lambda i: (clashes[i], i))]
        placed.append(_box(x, y, *best, name))
        out.append(best)
    return out


def plot_png(rows: Sequence[FrontierRow]) -> bytes:
    """Each entry as a point: drop against the share tree-valid, and against the
    surprisal increase (PNG bytes)."""
    import matplotlib  # deferred: matplotlib is heavy and only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred with matplotlib above

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    drawn: dict[int, list[tuple[float, float, str]]] = {0: [], 1: []}
    for row in rows:
        drop = row.drop or 0.0
        share = row.valid["tree"]
        if share is not None:
            left.scatter([share], [drop])
            drawn[0].append((share, drop, row.name))
        if row.surprisal_increase is not None:
            right.scatter([row.surprisal_increase], [drop])
            drawn[1].append((row.surprisal_increase, drop, row.name))
    left.set_xlim(-0.05, 1.05)
    left.set_xlabel("share of kept perturbations graded tree-valid")
    left.set_ylabel("mean worst-case drop")
    left.set_title("Damage against validity")
    right.set_xlabel("surprisal increase (bits per word)")
    right.set_title("Damage against naturalness")
    fig.tight_layout()
    for axis, points in ((left, drawn[0]), (right, drawn[1])):
        axis.autoscale_view()
        # data -> points: display pixels at the figure's dpi, 72 points an inch
        scale = 72.0 / fig.dpi
        at = [axis.transData.transform((x, y)) * scale for x, y, _ in points]
        names = [name for _, _, name in points]
        frame = axis.get_window_extent()
        bounds = (frame.x0 * scale, frame.y0 * scale, frame.x1 * scale, frame.y1 * scale)
        offsets = place_labels([(float(p[0]), float(p[1])) for p in at], names, bounds)
        for (x, y, name), offset in zip(points, offsets, strict=True):
            axis.annotate(
                name,
                (x, y),
                xytext=offset,
                textcoords="offset points",
                fontsize=_FONT,
                ha="left" if offset[0] >= 0 else "right",
                # a name set further off gets a thin line to its point
                arrowprops=None if offset in _OFFSETS[:4] else _LEADER,
            )
    return figure_png(fig)


def html_report(rows: Sequence[FrontierRow], settings: str, png: bytes) -> str:
    """``frontier.html``: the table, its legend and the plot as one self-contained page
    (no script, no request)."""
    body = "\n".join(
        [
            f"<p>{code_spans(settings)}</p>",
            html_table(HEADER, [row_cells(r) for r in rows], numeric=len(HEADER) - 2),
            f'<p class="hint">{code_spans(LEGEND)}</p>',
            png_figure(png, PLOT_CAPTION),
        ]
    )
    return static_page("damage against validity", body)


PLOT_CAPTION = "Mean worst-case drop against the share tree-valid and the surprisal increase."


def write_frontier(
    rows: Sequence[FrontierRow], settings: str, out: str | os.PathLike[str]
) -> list[Path]:
    """Write ``frontier.{json,md,png,html}`` into ``out`` as one set; the paths.

    Raises:
        OutputError: a file cannot be written.
    """
    directory = Path(out)
    paths = [directory / n for n in (JSON_NAME, MARKDOWN_NAME, PLOT_NAME, HTML_NAME)]
    png = plot_png(rows)
    with output_set():
        write_json(paths[0], {"settings": settings, "rows": [asdict(r) for r in rows]})
        with atomic_write(paths[1]) as handle:
            handle.write(markdown_report(rows, settings))
        with atomic_write(paths[2], "wb") as handle:
            handle.write(png)
        with atomic_write(paths[3]) as handle:
            handle.write(html_report(rows, settings, png))
    return paths
