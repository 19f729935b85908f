"""``brittle cut``: a treebank with every sentence cut to its first words."""

from __future__ import annotations

from pathlib import Path

import click

from brittle.cli.common import DASH_HELP, message_console, shown
from brittle.cli.group import main
from brittle.engine.core.atomic import check_output
from brittle.engine.core.conllu import iter_conllu, write_conllu
from brittle.engine.core.cut import CutCount, cut_treebank
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.scorers.probe_tasks import SENTENCE_WORDS


@main.command("cut")
@click.argument("treebank", type=click.Path(path_type=Path))
@click.option(
    "--words",
    default=SENTENCE_WORDS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Words each sentence keeps (La Malfa et al. cut to 20).",
)
@click.option(
    "--out",
    required=True,
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"The cut treebank (CoNLL-U, written atomically). {DASH_HELP}",
)
def cut_command(treebank: Path, words: int, out: Path) -> None:
    """Cut every sentence of TREEBANK to its first --words words.

    For La Malfa et al.'s setting: their probes read sentences cut or padded to 20
    words. Train the probes and attack on cut treebanks, with `train-probe --arch
    sentence --words N` for their probe over the whole padded sentence.

    A word whose head was cut away hangs from its nearest kept ancestor (relation
    `dep`); where the root was cut away, the shallowest kept word becomes the root.
    Empty nodes, multiword tokens reaching past the cut and DEPS go; `# text` is
    rebuilt and `# cut_from` gives the original length. Shorter sentences are copied
    unchanged.

    Example: brittle cut en_ewt-ud-test.conllu --words 20 --out en_ewt-test-20.conllu
    """
    check_no_overlap(named("TREEBANK", treebank), named("--out", out))
    check_output(out)
    count = CutCount()
    write_conllu(cut_treebank(iter_conllu(treebank), words, count), out)
    message_console(out).print(
        f"{count.sentences:,} sentences, {count.cut:,} cut to {words} words "
        f"({count.reattached:,} words reattached, {count.new_roots:,} new roots) "
        f"-> {shown(out)}"
    )
