"""``brittle train-probe``: train a probe on a model's representations and save it."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from brittle.cli.common import console, representation_run_options, verbose_option
from brittle.cli.group import main
from brittle.cli.probe_progress import RichReporter, format_metric
from brittle.engine.probes.probe_jobs import TrainJob, check_train_job, run_train_job
from brittle.engine.probes.probe_sweep import (
    SweepJob,
    SweepResult,
    check_sweep,
    parse_layers,
    run_sweep,
)
from brittle.engine.probes.probe_training import TrainConfig
from brittle.scorers.probe_tasks import PROBE_ARCHITECTURES, SENTENCE_WORDS
from brittle.scorers.representations import BackendRequest


def render_sweep(result: SweepResult) -> None:
    """One row per layer: dev loss, dev metrics, epochs; the best layer marked."""
    best = result.best.index
    metrics: list[str] = []
    for outcome in result.layers:
        metrics.extend(m for m in outcome.dev_metrics if m not in metrics)
    table = Table(title=f"one probe per layer of {result.model}")
    table.add_column("layer", justify="right")
    table.add_column("dev loss", justify="right")
    for name in metrics:
        table.add_column(f"dev {name}", justify="right")
    table.add_column("best epoch", justify="right")
    table.add_column("probe")
    for o in result.layers:
        mark = " *" if o.index == best else ""
        table.add_row(
            f"{o.index}{mark}",
            f"{o.dev_loss:.4f}",
            *(format_metric(o.dev_metrics.get(m), digits=4) for m in metrics),
            f"{o.best_epoch} of {o.epochs}" + (" (kept)" if o.kept else ""),
            o.path.name,
        )
    console.print(table)
    console.print(f"saved {result.out} (* lowest dev loss: layer {best}; summary in layers.json)")


@main.command("train-probe")
@click.argument("treebanks", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--dev",
    "dev",
    required=True,
    type=click.Path(path_type=Path),
    help="Dev treebank: early stopping on its loss, and dev metrics.",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Probe directory to write (replaced atomically if it is a probe).",
)
@click.option(
    "--model",
    default=None,
    help="Hub id or model directory, 'glove', a word2vec/GloVe file, either with "
    "'+pos' (MiniLM's position embeddings appended: the Fast+Pos control), or "
    "'random[:DIM]' (the control). Default: the bundled MiniLM encoder.",
)
@click.option(
    "--backend",
    default="auto",
    show_default=True,
    help="Representation backend (transformer, static, static-pos, random); auto guesses.",
)
@click.option(
    "--layer",
    "layer_text",
    default="-1",
    show_default=True,
    help="Hidden layer; negative counts from the output (-1 is the last, 0 the "
    "embeddings). 'all' or a list such as 0,2,4 trains one probe per layer from one "
    "pass of the model: --out then holds layer0, layer1, ... and layers.json (dev loss "
    "per layer, the best layer); a rerun keeps the layers already trained.",
)
@click.option(
    "--pooling",
    default="mean",
    show_default=True,
    type=click.Choice(["first", "mean", "last"]),
    help="Subword pooling.",
)
@click.option(
    "--task",
    default="distance",
    show_default=True,
    help="Probe task, e.g. distance or pos (`brittle list probes` shows them all).",
)
@click.option(
    "--arch",
    default="linear",
    show_default=True,
    type=click.Choice(list(PROBE_ARCHITECTURES)),
    help="linear: a map per word; mlp: three hidden layers per word; sentence: La Malfa "
    "et al.'s network over the whole sentence cut or padded to --words words (cut longer "
    "sentences first with `brittle cut`).",
)
@click.option(
    "--words",
    default=None,
    type=int,
    help=f"Words the sentence network reads (--arch sentence; default {SENTENCE_WORDS}).",
)
@click.option(
    "--rank",
    default=None,
    type=int,
    help="Rank of B (distance, depth, perceptron). Default: the vector size.",
)
@click.option(
    "--hidden", default=256, show_default=True, type=int, help="Hidden width (mlp, sentence)."
)
@click.option("--tagset", default="upos", show_default=True, type=click.Choice(["upos", "xpos"]))
@click.option(
    "--margin",
    default=1.0,
    show_default=True,
    type=float,
    help="Perceptron loss margin per wrong edge.",
)
@click.option("--epochs", default=40, show_default=True, type=int)
@click.option(
    "--patience",
    default=4,
    show_default=True,
    type=int,
    help="Epochs without dev-loss improvement before stopping.",
)
@click.option("--lr", default=1e-3, show_default=True, type=float)
@click.option("--batch-size", default=32, show_default=True, type=int, help="Sentences per step.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--standardize",
    is_flag=True,
    help="Standardise every input dimension with the training split's mean and "
    "standard deviation (kept in probe.json, applied to whatever the probe reads). For "
    "representations with a few huge dimensions, such as decoder LMs' middle layers.",
)
@click.option(
    "--oov",
    default="zero",
    show_default=True,
    type=click.Choice(["zero", "random"]),
    help="Static vectors: vector of unknown words.",
)
@click.option(
    "--no-lowercase", is_flag=True, help="Static vectors: do not retry unknown words lowercased."
)
@click.option(
    "--device", default=None, help="cpu, cuda, cuda:N or mps (default: cuda when available)."
)
@click.option(
    "--dtype",
    default="float32",
    show_default=True,
    type=click.Choice(["float32", "float16", "bfloat16"]),
    help="Precision of the model (half precision on GPU).",
)
@representation_run_options
@verbose_option
def train_probe_command(
    treebanks: tuple[Path, ...],
    dev: Path,
    out: Path,
    model: str | None,
    backend: str,
    layer_text: str,
    pooling: str,
    task: str,
    arch: str,
    words: int | None,
    rank: int | None,
    hidden: int,
    tagset: str,
    margin: float,
    epochs: int,
    patience: int,
    lr: float,
    batch_size: int,
    seed: int,
    standardize: bool,
    oov: str,
    no_lowercase: bool,
    device: str | None,
    dtype: str,
    threads: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Train a TASK probe on TREEBANKS (CoNLL-U) and save it to --out.

    Example: brittle train-probe en_lines-ud-train.conllu en_ewt-ud-dev.conllu
    --dev en_lines-ud-dev.conllu --layer -5 --task distance --out probes/dist-5

    Every layer at once (one pass of the model; evaluate takes the directory):
    brittle train-probe ... --layer all --task distance --out probes/dist-all

    Every option is checked before a treebank is read or a model loads. Progress goes
    to stderr: bars on a terminal, a plain line every 30 s in logs; --verbose adds
    one line per epoch, --quiet leaves only the results.
    """
    try:
        layers = parse_layers(layer_text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--layer") from None
    sweep = layers is None or len(layers) > 1
    layer = -1 if layers is None else layers[0]
    reporter = RichReporter(quiet=quiet, verbose=verbose)
    job = TrainJob(
        train=tuple(treebanks),
        dev=dev,
        out=out,
        task=task,
        arch=arch,
        layer=layer,
        request=BackendRequest(
            model=model,
            pooling=pooling,
            device=device,
            dtype=dtype,
            oov=oov,
            lowercase=not no_lowercase,
            seed=seed,
        ),
        backend=backend,
        rank=rank,
        hidden=hidden,
        tagset=tagset,
        margin=margin,
        words=words,
        config=TrainConfig(
            epochs=epochs,
            patience=patience,
            lr=lr,
            batch_size=batch_size,
            seed=seed,
            device=device,
            standardize=standardize,
        ),
        cache_dir=cache_dir,
        use_cache=not no_cache,
    )
    sweep_job = SweepJob(job, layers) if sweep else None
    if sweep_job is not None:
        check_sweep(sweep_job)
    else:
        check_train_job(job)
    if threads is not None:
        import torch

        torch.set_num_threads(max(1, threads))
    if sweep_job is not None:
        with reporter:
            swept = run_sweep(sweep_job, reporter=reporter)
        render_sweep(swept)
        return
    with reporter:
        result = run_train_job(job, reporter=reporter)
    probe = result.probe
    table = Table(title=f"{probe.spec.task} probe ({probe.spec.arch}) on {probe.key.describe()}")
    table.add_column("dev metric")
    table.add_column("value", justify="right")
    for name, value in result.dev_metrics.items():
        table.add_row(name, format_metric(value, digits=4))
    table.add_row("best epoch", f"{result.best_epoch} of {len(result.history)}")
    table.add_row("dev loss", f"{probe.info.get('dev_loss', float('nan')):.4f}")
    o = probe.info.get("oov")
    if isinstance(o, dict):
        table.add_row("OOV words", f"{o['oov_tokens']:,} of {o['tokens']:,} ({o['policy']})")
    console.print(table)
    console.print(f"saved {out}")
