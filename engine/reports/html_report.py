"""``report.html``: one self-contained page of an attack, readable offline.

The page has three parts:

- the overview, rendered here as static HTML: configuration, inputs (treebank, probes
  and their representation), the Algorithm 3 table (clean, perturbed, mean drop ± sd
  per task), Algorithm 2's epsilon, success rate, queries, and the plots inlined as
  PNG data URIs;
- the sentence table, built by the page's script from the embedded data: sortable by
  damage, syntax distance, words changed and queries, filterable by outcome and text;
- the sentence view, rendered on demand when a row is opened: original and adversarial
  text with the changed words marked, the gold tree and, for distance-type probes, the
  predicted spanning trees of the clean and of the perturbed sentence as arcs over the
  words (edges coloured right or wrong against gold), the metrics before and after,
  predicted against gold depths and flipped tags.

Nothing is fetched: style and script are inline (``report.css`` and ``report.js`` next
to this module), and a Content-Security-Policy forbids any request other than inline
data. The policy names the one style sheet and the one script by their SHA-256 hash
(:func:`content_policy`), so no other script runs and no other style sheet applies even
if some text ever reached the page unescaped; only style attributes (the legend's
colours) are allowed inline. The sentences go in one ``application/json`` script
block, compactly (labels interned, one array per field), streamed to the file one row
at a time, so a large run is written without holding it in memory. The page is a
function of the run's files: the same results give the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import IO, TYPE_CHECKING

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.report import PLOTS, Summary
from brittle.engine.reports.results import ResultRow

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "ATTACK_COLUMNS",
    "ATTACK_FILTERS",
    "ATTACK_OUTCOMES",
    "REPORT_HTML",
    "VALIDITY_COLUMN",
    "Column",
    "LabelIndex",
    "SentenceRecords",
    "code_spans",
    "content_policy",
    "figure_png",
    "html_table",
    "png_figure",
    "render_overview",
    "static_page",
    "write_budget_index",
    "write_html_report",
    "write_sentence_page",
]

REPORT_HTML = "report.html"

#: Plots inlined in the overview, in order, when the run directory has them.
PLOT_FILES = ("clean_vs_perturbed.png", "drop_vs_budget.png")


def _source_hash(text: str) -> str:
    """The CSP source of an inline element whose content is ``text``: ``'sha256-...'``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_policy(style: str, script: str | None = None) -> str:
    """The Content-Security-Policy of a page whose one ``<style>`` element holds
    ``style`` and whose one script (if any) holds ``script``, exactly as written.

    Nothing may be fetched (``default-src 'none'``; images are ``data:`` URIs). The
    style element and the script are allowed by their hash, so an injected ``<script>``,
    ``<style>``, event-handler attribute or ``javascript:`` URL is refused. Style
    attributes stay allowed (``style-src-attr``: the page's script colours legends with
    them); ``style-src`` is the fallback of browsers without the CSP 3 directives.
    """
    policy = [
        "default-src 'none'",
        "img-src data:",
        "style-src 'unsafe-inline'",
        f"style-src-elem {_source_hash(style)}",
        "style-src-attr 'unsafe-inline'",
    ]
    if script is not None:
        policy.append(f"script-src {_source_hash(script)}")
    return "; ".join(policy)


_HEAD = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header>
<h1>$title</h1>
<nav><a href="#overview">Overview</a> · <a href="#sentences">Sentences</a></nav>
</header>
<main>
$overview
<section id="sentences">
<h2>Sentences</h2>
<div class="controls">
<label>Show <select id="filter-success">
<option value="all">all sentences</option>
$filters
</select></label>
<label>Text <input type="search" id="filter-text" placeholder="words or sentence id"></label>
<span id="row-count" aria-live="polite"></span>
</div>
<p class="hint">Click a column heading to sort, a row to open the sentence.</p>
<table id="sentence-table">
<thead>
<tr>
$columns
</tr>
</thead>
<tbody></tbody>
</table>
</section>
</main>
<div id="sentence-view" role="dialog" aria-modal="true" aria-label="sentence" hidden>
<div class="panel">
<div class="panel-bar">
<button type="button" id="sv-prev" title="previous sentence (left arrow)">&larr;</button>
<button type="button" id="sv-next" title="next sentence (right arrow)">&rarr;</button>
<button type="button" id="sv-close" title="close (Escape)">close</button>
</div>
<div id="sv-body"></div>
</div>
</div>
<script type="application/json" id="report-data">"""
)


@dataclass(frozen=True)
class Column:
    """A column of a page's sentence table; the page's script fills its cells.

    Attributes:
        label: the heading (text).
        key: the record field shown and sorted by (``None``: not sortable).
        fmt: how a cell shows the field: ``int``, ``id``, ``ok`` (the outcome's name),
            ``text`` (the perturbed words, changed ones marked; ``key`` ``None``), or a
            number of decimals (``"3"``).
        css: the cell's class (``c-num num`` for a number).
    """

    label: str
    key: str | None
    fmt: str
    css: str = "c-num num"

    def heading(self, *, sorted_by: bool = False) -> str:
        """The ``<th>`` of the column."""
        if self.key is None:
            return f'<th class="{self.css}" data-fmt="{self.fmt}">{_e(self.label)}</th>'
        sort = ' aria-sort="ascending"' if sorted_by else ""
        return (
            f'<th data-key="{self.key}"{sort} class="{self.css}" data-fmt="{self.fmt}">'
            f'<button type="button">{_e(self.label)}</button></th>'
        )


#: The sentence table of an attack's page.
ATTACK_COLUMNS = (
    Column("#", "i", "int", "c-i num"),
    Column("sentence", "id", "id", "c-id"),
    Column("adversarial text", None, "text", "c-text"),
    Column("damage", "d", "3"),
    Column("syntax dist.", "sd", "3"),
    Column("words changed", "h", "int"),
    Column("queries", "q", "int"),
    Column("result", "ok", "ok", "c-ok"),
)
#: The column of a graded attack: the strictest validity level each kept perturbation
#: reached (``meaning``, ``grammatical``, ``tree``, ``none``; ``–``: nothing kept).
VALIDITY_COLUMN = Column("validity", "v", "id", "c-ok")
#: Outcome codes (a record's ``ok``) of an attack, and what the outcome filter calls them.
ATTACK_OUTCOMES = ("failed", "success", "nothing to perturb")
#: The outcome filter's options: (outcome code, option value, text).
ATTACK_FILTERS = (
    (1, "success", "successful attacks"),
    (0, "failure", "failed attacks"),
    (2, "none", "nothing to perturb"),
)

_TAIL = Template(
    """</script>
<script>$js</script>
</body>
</html>
"""
)


def _asset(name: str) -> str:
    """The text of an asset shipped next to this module (``report.css``, ``report.js``)."""
    return resources.files("brittle.engine.reports").joinpath(name).read_text(encoding="utf-8")


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: int = 0) -> str:
    """An HTML table; cells are HTML already; the last ``numeric`` columns align right."""
    first = len(head) - numeric

    def cell(tag: str, k: int, text: str) -> str:
        return f'<{tag} class="num">{text}</{tag}>' if k >= first else f"<{tag}>{text}</{tag}>"

    out = ["<table>", "<thead><tr>"]
    out += [cell("th", k, h) for k, h in enumerate(head)]
    out += ["</tr></thead>", "<tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(cell("td", k, c) for k, c in enumerate(row)) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


_STATIC = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header>
<h1>$title</h1>
</header>
<main>
$body
</main>
</body>
</html>
"""
)


def static_page(title: str, body: str) -> str:
    """A self-contained page with the report's style and no script around ``body``
    (HTML); ``title`` is text."""
    css = _inline(_asset("report.css"))
    return _STATIC.substitute(csp=content_policy(css), title=_e(title), css=css, body=body)


def _inline(text: str) -> str:
    """An asset as it is written inside its element: on lines of its own."""
    return "\n" + text


def code_spans(text: str) -> str:
    """``text`` escaped for HTML, its Markdown code spans (`x`) as ``<code>``."""
    parts = _e(text).split("`")
    return "".join(f"<code>{p}</code>" if k % 2 else p for k, p in enumerate(parts))


def html_table(head: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: int = 0) -> str:
    """An HTML table of text cells (escaped); the last ``numeric`` columns align right."""
    return _table([_e(h) for h in head], ([_e(c) for c in row] for row in rows), numeric=numeric)


def figure_png(fig: Figure) -> bytes:
    """The PNG bytes of a matplotlib figure at 120 dpi, for :func:`png_figure`; the
    figure is closed afterwards, whether or not it could be drawn."""
    import matplotlib.pyplot as plt  # deferred: the caller has loaded matplotlib already

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=120)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def png_figure(png: bytes, caption: str) -> str:
    """A ``<figure>`` showing PNG bytes inline (a data URI) with a text caption."""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{_e(caption)}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _plot_images(out_dir: Path) -> list[str]:
    """``<figure>`` elements of the run's plots, as data URIs."""
    figures = []
    for name in PLOT_FILES:
        path = out_dir / PLOTS / name
        if not path.is_file():
            continue
        caption = {
            "clean_vs_perturbed.png": "Each sentence's clean metric against its perturbed "
            "metric, per task (below the diagonal: the attack lowered it).",
            "drop_vs_budget.png": "Mean worst-case drop per task against the budget.",
        }[name]
        figures.append(png_figure(path.read_bytes(), caption))
    return figures


def _validity_section(summary: Summary) -> list[str]:
    """How valid the kept perturbations are and the drop of the valid ones, per level
    (or that they were not graded)."""
    validity = summary.get("validity")
    if validity is None:
        if not summary["success_rate"]:
            return []
        return [
            '<p class="hint">Validity of the kept perturbations: not graded (the run '
            "had <code>--no-grade</code>; <code>brittle grade</code> grades them).</p>"
        ]
    tasks = list(summary["tasks"])
    rows = [["all kept", "–", *(_fmt(summary["tasks"][t]["mean_drop"]) for t in tasks)]]
    for level in ("tree", "grammatical", "meaning"):
        drops = validity["mean_drop_valid"][level]
        rows.append([level, _fmt(validity["shares"][level]), *(_fmt(drops.get(t)) for t in tasks)])
    return [
        "<h3>Validity of the kept perturbations</h3>",
        f"<p>{validity['graded']} kept perturbations graded by brittle's judges. Mean drop "
        "when a perturbation that is not valid at the level counts as none, beside the mean "
        "drop of all.</p>",
        _table(["level", "share valid", *(_e(t) for t in tasks)], rows, numeric=len(tasks) + 1),
    ]


def render_overview(summary: Summary, out_dir: Path) -> str:
    """The overview section: configuration, inputs, Algorithms 3 and 2, search, plots."""
    cfg = summary["config"]
    parts = ['<section id="overview">', "<h2>Overview</h2>"]
    lead = (
        f"{summary['sentences']} sentences of <code>{_e(cfg.get('treebank', '?'))}</code>, "
        f"method <code>{_e(cfg.get('method', '?'))}</code>, search "
        f"<code>{_e(cfg.get('search', '?'))}</code>, budget &tau; = {_e(cfg.get('budget', '?'))}, "
        f"seed {_e(cfg.get('seed', '?'))}."
    )
    parts.append(f"<p>{lead}</p>")
    if not summary["complete"]:
        parts.append(
            f'<p class="warn">Incomplete: {summary["sentences"]} of '
            f"{summary['treebank_sentences']} sentences (the run was interrupted; "
            "<code>brittle attack ... --resume</code> finishes it).</p>"
        )
    probes = summary["inputs"].get("probes")
    if isinstance(probes, list) and probes:
        parts.append("<h3>Probes</h3>")
        rows = []
        for p in probes:
            if not isinstance(p, dict):
                continue
            sha = str(p.get("sha256", ""))
            rows.append(
                [
                    f"<code>{_e(p.get('path', '?'))}</code>",
                    _e(p.get("task", "?")),
                    _e(p.get("representation", "?")),
                    f'<code title="{_e(sha)}">{_e(sha[:12])}</code>',
                ]
            )
        parts.append(_table(["probe", "task", "model and layer", "sha256"], rows))
    parts.append("<h3>Worst-case drop per task (Algorithm 3)</h3>")
    if summary["objective"]:
        parts.append(f"<p>Objective: the mean drop of {_e(', '.join(summary['objective']))}.</p>")
    parts.append(
        _table(
            ["task", "clean", "perturbed", "mean drop ± sd"],
            (
                [
                    _e(task),
                    _fmt(v["clean"]),
                    _fmt(v["perturbed"]),
                    f"{_fmt(v['mean_drop'])} ± {_fmt(v['std_drop'])}",
                ]
                for task, v in summary["tasks"].items()
            ),
            numeric=3,
        )
    )
    parts += _validity_section(summary)
    parts.append("<h3>Representation distance (Algorithm 2) and search</h3>")
    parts.append(
        _table(
            [
                "epsilon L2",
                "epsilon cosine",
                "success rate",
                "queries per sentence",
                "mean syntax distance",
                "mean words changed",
                "nothing to perturb",
            ],
            [
                [
                    _fmt(summary["epsilon_l2"]),
                    _fmt(summary["epsilon_cosine"]),
                    _fmt(summary["success_rate"]),
                    _fmt(summary["queries_per_sentence"], 1),
                    _fmt(summary["mean_syntax_distance"]),
                    _fmt(summary["mean_hamming"], 2),
                    str(summary["no_eligible"]),
                ]
            ],
            numeric=7,
        )
    )
    parts.append(
        '<p class="hint">Epsilon: the mean over sentences of the farthest L2 distance and '
        "the lowest cosine similarity between the representation of the original and of a "
        "kept perturbation.</p>"
    )
    figures = _plot_images(out_dir)
    if figures:
        parts.append("<h3>Plots</h3>")
        parts += figures
    parts.append("<details><summary>Configuration and versions</summary>")
    config_rows = [[_e(k), f"<code>{_e(json.dumps(cfg[k]))}</code>"] for k in sorted(cfg)]
    parts.append(_table(["setting", "value"], config_rows))
    version_rows = [[_e(k), _e(v)] for k, v in sorted(summary["versions"].items())]
    parts.append(_table(["package", "version"], version_rows))
    parts.append("</details>")
    parts.append("</section>")
    return "\n".join(parts)


class LabelIndex:
    """Interned labels (UPOS, relations, tags): records hold indices into
    :attr:`labels`, which the page's data block carries once, after the records."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self._index: dict[str, int] = {}

    def _label(self, name: str) -> int:
        """The index of ``name`` in :attr:`labels` (added when new)."""
        k = self._index.get(name)
        if k is None:
            k = self._index[name] = len(self.labels)
            self.labels.append(name)
        return k

    def gold_tree(self, sentence: Sentence) -> JSONObject:
        """A sentence's gold tree as record fields: ``hd`` (heads, 1-based, 0 for the
        root), ``u`` (UPOS) and ``r`` (relations), labels interned."""
        return {
            "hd": [int(h) for h in sentence.heads.tolist()],
            "u": [self._label(u) for u in sentence.upos],
            "r": [self._label(r) for r in sentence.deprels],
        }


class SentenceRecords(LabelIndex):
    """Turns result rows and their treebank sentences into the page's compact records
    (labels interned, see :class:`LabelIndex`).

    Args:
        tasks: the task columns, in the summary's order (a record's ``t`` follows it).
    """

    def __init__(self, tasks: Sequence[str]) -> None:
        super().__init__()
        self.tasks = list(tasks)

    def _prediction(self, value: JSONValue) -> JSONValue:
        """A stored prediction with its tags interned (``tags`` becomes ``ti``)."""
        if isinstance(value, dict) and isinstance(value.get("tags"), list):
            tags = value["tags"]
            assert isinstance(tags, list)
            return {"ti": [self._label(str(t)) for t in tags]}
        return value

    def record(self, row: ResultRow, sentence: Sentence | None) -> JSONObject:
        """The record of one sentence (``sentence``: its treebank sentence, when known)."""
        words = list(row.words)
        changed: list[JSONValue] = [
            [k, b] for k, (a, b) in enumerate(zip(row.words, row.perturbed, strict=False)) if a != b
        ]
        rec: JSONObject = {
            "i": row.index,
            "id": row.sent_id,
            "ok": 2 if row.nothing_eligible else int(row.success),
            "d": row.damage,
            "sd": row.syntax_distance,
            "h": row.hamming,
            "q": row.queries,
            "l2": row.epsilon_l2,
            "cos": row.epsilon_cosine,
            "w": list(words),
            "c": changed,
        }
        if row.order is not None:
            rec["o"] = list(row.order)
        if row.validity is not None and row.success:
            rec["v"] = row.validity.level
        tasks: list[JSONValue] = []
        for t in self.tasks:
            s = row.tasks.get(t)
            tasks.append(None if s is None else [s.clean, s.perturbed, s.drop])
        rec["t"] = tasks
        if sentence is not None and len(sentence) == len(words):
            rec.update(self.gold_tree(sentence))
        if row.predictions:
            preds: JSONObject = {}
            for name, entry in row.predictions.items():
                if not isinstance(entry, Mapping):
                    continue
                preds[name] = {k: self._prediction(v) for k, v in entry.items()}
            rec["p"] = preds
        return rec


def _script_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, no ``<!--``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c")


def _write_data(
    handle: IO[str], meta: JSONObject, records: Iterable[JSONObject], labels: list[str]
) -> int:
    """Stream the data block: ``meta``'s fields, ``"rows": [...]``, then ``"labels"``
    (read after the records are consumed: records intern labels into it)."""
    handle.write("{")
    for key, value in meta.items():
        handle.write(_script_json(key) + ":" + _script_json(value) + ",")
    handle.write('"rows":[\n')
    n = 0
    for record in records:
        if n:
            handle.write(",\n")
        handle.write(_script_json(record))
        n += 1
    handle.write('\n],"labels":' + _script_json(labels) + "}")
    return n


def write_sentence_page(
    target: str | Path,
    *,
    title: str,
    overview: str,
    columns: Sequence[Column],
    filters: Sequence[tuple[int, str, str]],
    meta: JSONObject,
    records: Iterable[JSONObject],
    labels: list[str],
) -> None:
    """Write a page with an overview, a sentence table and sentence views (atomically;
    inside an :func:`~brittle.engine.core.atomic.output_set` it joins the set).

    Args:
        target: where to write (``-``: standard output).
        title: the page's title (text).
        overview: the overview section (HTML).
        columns: the sentence table's columns; the first is sorted by.
        filters: the outcome filter's options: (outcome code, value, text).
        meta: fields of the data block before the rows (``page`` picks the script's
            sentence view: ``attack`` when absent, or ``perturb``).
        records: the sentences' records, in order; consumed once.
        labels: the labels the records index, filled while they are consumed.
    """
    options = "\n".join(
        f'<option value="{_e(value)}" data-ok="{code}">{_e(text)}</option>'
        for code, value, text in filters
    )
    heads = "\n".join(c.heading(sorted_by=k == 0) for k, c in enumerate(columns))
    css, js = _inline(_asset("report.css")), _inline(_asset("report.js"))
    with atomic_write(target) as handle:
        handle.write(
            _HEAD.substitute(
                csp=content_policy(css, js),
                title=_e(title),
                css=css,
                overview=overview,
                filters=options,
                columns=heads,
            )
        )
        _write_data(handle, meta, records, labels)
        handle.write(_TAIL.substitute(js=js))


def write_html_report(
    out_dir: Path,
    summary: Summary,
    pairs: Iterable[tuple[ResultRow, Sentence | None]],
    *,
    path: Path | None = None,
) -> Path:
    """Write ``report.html`` of an attack directory (atomically).

    Args:
        out_dir: the attack's output directory (its ``plots/`` are inlined).
        summary: the attack's summary (``summary.json``).
        pairs: every result row with its treebank sentence (``None`` when unknown: the
            page then shows the words without the gold tree), in order; consumed once.
        path: where to write (default ``out_dir / report.html``).

    Returns:
        The path written.
    """
    target = path if path is not None else out_dir / REPORT_HTML
    cfg = summary["config"]
    records = SentenceRecords(list(summary["tasks"]))
    write_sentence_page(
        target,
        title=f"brittle attack: {Path(str(cfg.get('treebank', '?'))).name}",
        overview=render_overview(summary, out_dir),
        columns=ATTACK_COLUMNS + ((VALIDITY_COLUMN,) if summary.get("validity") else ()),
        filters=ATTACK_FILTERS,
        meta={
            "method": cfg.get("method", ""),
            "outcomes": list(ATTACK_OUTCOMES),
            "tasks": list(records.tasks),
        },
        records=(records.record(row, sentence) for row, sentence in pairs),
        labels=records.labels,
    )
    return target


def write_budget_index(out: Path, summaries: Mapping[int, Summary]) -> Path:
    """Write ``out/report.html`` of a multi-budget attack (atomically): per budget, a
    link to its own page (``tau=K/report.html``), its success rate, queries, epsilon and
    mean drop per task, then the plot of the drop against the budget.

    Returns:
        The path written.
    """
    budgets = sorted(summaries)
    tasks: list[str] = []
    for tau in budgets:
        tasks += [t for t in summaries[tau]["tasks"] if t not in tasks]
    head = ["tau", "page", "sentences", "success rate", "queries per sentence", "epsilon L2"]
    head += [f"{t} drop" for t in tasks]
    rows = []
    for tau in budgets:
        s = summaries[tau]
        cells = [
            str(tau),
            f'<a href="tau={tau}/{REPORT_HTML}">tau={tau}/{REPORT_HTML}</a>',
            str(s["sentences"]),
            _fmt(s["success_rate"]),
            _fmt(s["queries_per_sentence"], 1),
            _fmt(s["epsilon_l2"]),
        ]
        for t in tasks:
            v = s["tasks"].get(t)
            cells.append("–" if v is None else f"{_fmt(v['mean_drop'])} ± {_fmt(v['std_drop'])}")
        rows.append(cells)
    cfg = summaries[budgets[0]]["config"] if budgets else {}
    parts = [
        f"<p>Budgets {', '.join(str(t) for t in budgets)} on <code>"
        f"{_e(cfg.get('treebank', '?'))}</code>, method <code>{_e(cfg.get('method', '?'))}"
        f"</code>, search <code>{_e(cfg.get('search', '?'))}</code>. Each budget's page "
        "has its sentences and their trees.</p>",
        _table(head, rows, numeric=len(head) - 2),
        *_plot_images(out),
    ]
    target = out / REPORT_HTML
    with atomic_write(target) as handle:
        handle.write(static_page("brittle attack: worst-case drop by budget", "\n".join(parts)))
    return target
