"""Writers for a :class:`~brittle.engine.compare.compare_run.CompareResult`: Markdown, JSON, PNG
and a self-contained HTML page.

Writers only read the result; every file is written atomically, and
:func:`write_compare_outputs` commits the three as one set.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from brittle.engine.compare.compare_run import CompareResult, CompareRow
from brittle.engine.core.atomic import atomic_write, check_output, output_set, write_json
from brittle.engine.reports.html_report import (
    code_spans,
    figure_png,
    html_table,
    png_figure,
    static_page,
)

__all__ = [
    "HTML_NAME",
    "JSON_NAME",
    "MARKDOWN_NAME",
    "PLOT_NAME",
    "html_report",
    "markdown_table",
    "quality_table",
    "write_compare_outputs",
]

JSON_NAME = "compare-methods.json"
MARKDOWN_NAME = "compare-methods.md"
PLOT_NAME = "compare-methods.png"
HTML_NAME = "compare-methods.html"


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "–" if x is None else format(x, spec)


def _row_cells(r: CompareRow) -> list[str]:
    dist = _fmt(r.distance)
    if r.distance_sem is not None:
        dist += f" ± {r.distance_sem:.3f}"
    return [
        r.method,
        "–" if r.budget is None else str(r.budget),
        dist,
        _fmt(r.distance_unlabelled),
        _fmt(r.best_of_b),
        _fmt(r.share_identical, ".1%"),
        _fmt(r.pos_gold, ".1%"),
        _fmt(r.pos_tagger, ".1%"),
        _fmt(r.mean_hamming, ".2f"),
        f"{r.sentences} / {r.sentences + r.without_candidates}",
        str(r.candidates),
    ]


def _header(result: CompareResult) -> list[str]:
    """The columns of the comparison table."""
    return [
        "method",
        "tau",
        f"TED ({result.config.tree_labels}) ± s.e.",
        "TED (shape)",
        "best of b",
        "parse identical",
        "POS kept (gold)",
        "POS kept (tagger)",
        "words changed",
        "sentences",
        "pairs",
    ]


def _table_rows(result: CompareResult) -> list[list[str]]:
    """The cells of the comparison table: methods by budget, then the references."""
    return [_row_cells(r) for r in (*result.method_rows(), *result.reference_rows())]


def markdown_table(result: CompareResult) -> str:
    """The comparison as a Markdown table (methods by budget, then the references)."""
    header = _header(result)
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|",
    ]
    for cells in _table_rows(result):
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


_QUALITY_HEADER = [
    "method",
    "tau",
    "words changed",
    "surprisal increase (bits/word)",
    "similarity (MiniLM cosine)",
    "retag agreement (gold)",
    "DND",
    "IDC",
]


def _quality_rows(result: CompareResult) -> list[list[str]]:
    """The cells of the quality table (none when quality was not measured)."""
    rows = result.method_rows()
    if all(r.mean_surprisal_increase is None for r in rows):
        return []
    return [
        [
            r.method,
            str(r.budget),
            _fmt(r.mean_words_changed, ".2f"),
            _fmt(r.mean_surprisal_increase, "+.3f"),
            _fmt(r.mean_similarity),
            _fmt(r.pos_gold, ".1%"),
            _fmt(r.mean_dnd),
            _fmt(r.mean_idc),
        ]
        for r in rows
    ]


def quality_table(result: CompareResult) -> str:
    """How natural the drawn candidates leave the sentences, per method and budget, as
    a Markdown table (empty when quality was not measured)."""
    rows = _quality_rows(result)
    if not rows:
        return ""
    header = _QUALITY_HEADER
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|",
    ]
    for cells in rows:
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


_QUALITY_LEGEND = (
    "Means over every drawn perturbation. `surprisal increase`: the causal LM's mean "
    "surprisal per word of the perturbed sentence minus the original's (bits; 0 = "
    "reads as well). `similarity`: cosine of the MiniLM sentence embeddings of "
    "original and perturbation (1 = same meaning). `retag agreement`: share of changed "
    "words the tagger tags with their gold UPOS. `DND`/`IDC`: displacement of the word "
    "order of reorderings (Clouatre et al.; 0 = unchanged)."
)

_LEGEND = (
    "TED: normalised tree edit distance between the parse of the original and the parse "
    "of the perturbation (divided by the larger word count), averaged over the "
    "perturbations of a sentence, then over sentences. `best of b`: the smallest "
    "distance among a sentence's perturbations. `POS kept`: share of changed words "
    "whose tag on the perturbed sentence equals the gold UPOS / the tagger's tag on "
    "the original. References compare the parses of two different sentences."
)


def _quality_section(result: CompareResult) -> str:
    table = quality_table(result)
    if not table:
        return ""
    return "\n## Quality of the drawn perturbations\n\n" + table + "\n" + _QUALITY_LEGEND + "\n"


def _settings(result: CompareResult) -> str:
    """The settings line (Markdown code spans for names)."""
    c = result.config
    parser = result.parser
    model = parser.get("model", parser.get("parser", c.parser))
    return (
        f"Treebank `{result.treebank}`"
        + (f" (first {c.limit} sentences)" if c.limit else "")
        + f"; parser `{c.parser}` ({model}); b = {c.candidates} perturbations per sentence, "
        f"method and tau; seed {c.seed}."
    )


def markdown_report(result: CompareResult) -> str:
    """A short Markdown page: settings, the table, the column legend."""
    return (
        "# compare-methods\n\n"
        + _settings(result)
        + "\n\n"
        + markdown_table(result)
        + "\n"
        + _LEGEND
        + "\n"
        + _quality_section(result)
    )


def html_report(result: CompareResult, png: bytes) -> str:
    """``compare-methods.html``: the Markdown report's content and the plot as one
    self-contained page (no script, no request)."""
    parts = [
        f"<p>{code_spans(_settings(result))}</p>",
        html_table(_header(result), _table_rows(result), numeric=len(_header(result)) - 2),
        f'<p class="hint">{code_spans(_LEGEND)}</p>',
    ]
    quality = _quality_rows(result)
    if quality:
        parts += [
            "<h2>Quality of the drawn perturbations</h2>",
            html_table(_QUALITY_HEADER, quality, numeric=len(_QUALITY_HEADER) - 2),
            f'<p class="hint">{code_spans(_QUALITY_LEGEND)}</p>',
        ]
    parts.append(png_figure(png, "Parse distance and POS preservation per method and tau."))
    return static_page("compare-methods", "\n".join(parts))


def plot(result: CompareResult, path: str | os.PathLike[str]) -> None:
    """Grouped bars: mean distance per method and tau, references as dashed lines (PNG)."""
    with atomic_write(path, "wb") as handle:
        handle.write(plot_png(result))


def plot_png(result: CompareResult) -> bytes:
    """The bytes of :func:`plot`'s PNG."""
    import matplotlib  # deferred: matplotlib is heavy and only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred with matplotlib above

    rows = result.method_rows()
    methods = list(dict.fromkeys(r.method for r in rows))
    budgets = list(result.config.budgets)
    fig, (ax, ax_pos) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(budgets))
    for k, method in enumerate(methods):
        by_tau = {r.budget: r for r in rows if r.method == method}
        vals = [by_tau[t].distance or 0.0 if t in by_tau else 0.0 for t in budgets]
        errs = [by_tau[t].distance_sem or 0.0 if t in by_tau else 0.0 for t in budgets]
        pos = [by_tau[t].pos_tagger or 0.0 if t in by_tau else 0.0 for t in budgets]
        offset = (k - (len(methods) - 1) / 2) * width
        ax.bar(x + offset, vals, width, yerr=errs, label=method, capsize=2)
        ax_pos.bar(x + offset, pos, width, label=method)
    for r, style in zip(result.reference_rows(), ("--", ":"), strict=False):
        if r.distance is not None:
            ax.axhline(r.distance, color="black", linestyle=style, linewidth=1, label=r.method)
    ax.set_xticks(x, [f"tau={t}" for t in budgets])
    ax.set_ylabel(f"normalised tree edit distance ({result.config.tree_labels})")
    ax.set_title("Parse distance: original vs perturbation")
    ax.legend(fontsize=8)
    ax_pos.set_xticks(x, [f"tau={t}" for t in budgets])
    ax_pos.set_ylim(0, 1)
    ax_pos.set_ylabel("share of changed words keeping their tag")
    ax_pos.set_title("POS preservation (tagger on original)")
    fig.tight_layout()
    return figure_png(fig)


def write_compare_outputs(result: CompareResult, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``compare-methods.{json,md,png,html}`` into ``out_dir``; returns the paths.

    The directory is created if needed. The files are committed as one set: a failure
    leaves none of them new (files of those names already there untouched, a directory
    created for them removed).

    Raises:
        OutputError: ``out_dir`` is a file, or a file cannot be written.
    """
    check_output(out_dir, directory=True)
    out = Path(out_dir)
    paths = [out / JSON_NAME, out / MARKDOWN_NAME, out / PLOT_NAME, out / HTML_NAME]
    with output_set():
        write_json(paths[0], result.to_dict(), sort_keys=True)
        with atomic_write(paths[1]) as handle:
            handle.write(markdown_report(result))
        png = plot_png(result)
        with atomic_write(paths[2], "wb") as handle:
            handle.write(png)
        with atomic_write(paths[3]) as handle:
            handle.write(html_report(result, png))
    return paths
