"""``brittle report``: render an attack directory's reports again from its results."""

from __future__ import annotations

from pathlib import Path

import click

from brittle.cli.attack import print_summary
from brittle.cli.common import console
from brittle.cli.group import main
from brittle.engine.attack import rerender
from brittle.engine.reports.html_report import REPORT_HTML, write_budget_index
from brittle.engine.reports.report import (
    DROP_VS_BUDGET,
    PLOTS,
    iter_budget_runs,
    plot_drop_vs_budget,
)


@main.command("report")
@click.argument("out", type=click.Path(path_type=Path, exists=True, file_okay=False))
def report_command(out: Path) -> None:
    """Re-render summary.json, summary.md, plots, adversarial.conllu and report.html of
    an attack directory OUT from its results.jsonl (and its treebank), without the
    model.

    report.html is one self-contained page (no network): open it in any browser. A
    multi-budget directory (tau=1, tau=2, ...) gets one page per budget and, in OUT, a
    report.html that compares the budgets and links to them.
    """
    runs = list(iter_budget_runs(out))
    if runs:
        summaries = {tau: rerender(path) for tau, path in runs}
        plot_drop_vs_budget(summaries, out / PLOTS / DROP_VS_BUDGET)
        for tau in sorted(summaries):
            print_summary(summaries[tau])
        pages = [write_budget_index(out, summaries), *(path / REPORT_HTML for _, path in runs)]
    else:
        print_summary(rerender(out))
        pages = [out / REPORT_HTML]
    for page in pages:
        console.print(f"wrote {page}")
