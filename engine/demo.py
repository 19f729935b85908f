"""The demo: the main job end to end on the built-in treebank, offline.

The built-in treebank is split into train (sentences 1-80), dev (81-95) and attack
(96 onwards). Two linear probes (structural distance and POS) are trained on layer -5
of the bundled MiniLM and cached in the data home, keyed by the treebank's content, so
a second demo reuses them. Then the attack section is attacked with the ``meaning``
validity preset (coPOS synonyms of the sense each word has in its sentence, kept only
when each changed word and the sentence stay close in meaning and brittle's judges grade
the sentence meaning-kept: docs/presets.md) under a beam search, and the reports are
written. The same search then runs with the ``tree`` validity preset (Jabberwocky
nonwords, which keep the gold tree by construction) into ``OUT/tree``, so the two rows
show what meaning-keeping change and what any syntax-keeping change do to the probes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from brittle.data import default_treebank_path
from brittle.engine.attack import AttackConfig
from brittle.engine.core.conllu import read_conllu, write_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.resources import data_home
from brittle.engine.probes.probe_jobs import Reporter, TrainJob, run_train_job
from brittle.engine.probes.probe_training import TrainConfig
from brittle.search.presets import PRESETS

TRAIN_END = 80
DEV_END = 95
DEMO_TASKS = ("distance", "pos")
DEMO_LAYER = -5


@dataclass(frozen=True)
class DemoPlan:
    """Where the demo's splits and probes live, and how it attacks."""

    home: Path
    train: Path
    dev: Path
    attack: Path
    probes: tuple[Path, ...]


def prepare_demo(home: Path | None = None) -> DemoPlan:
    """Write the three splits of the built-in treebank into the data home (idempotent)."""
    source = default_treebank_path()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    root = (home or data_home()) / "demo" / digest
    sentences = read_conllu(source)
    splits = {
        "train": sentences[:TRAIN_END],
        "dev": sentences[TRAIN_END:DEV_END],
        "attack": sentences[DEV_END:],
    }
    paths = {}
    for name, part in splits.items():
        path = root / f"{name}.conllu"
        if not path.exists():
            write_conllu(part, path)
        paths[name] = path
    probes = tuple(root / "probes" / f"minilm{DEMO_LAYER}-{task}" for task in DEMO_TASKS)
    return DemoPlan(root, paths["train"], paths["dev"], paths["attack"], probes)


def check_demo_out(out: Path) -> None:
    """``out`` can hold the reports (absent or a directory); checked before training.

    Raises:
        ConfigError: ``out`` or one of its existing parents is a file.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory for the reports")
    for parent in out.parents:  # the first existing ancestor must be a directory
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"--out {out}: {parent} is a file, not a directory")
            break


def train_demo_probes(plan: DemoPlan, *, reporter: Reporter | None = None) -> list[Path]:
    """Train the demo probes that are not cached yet; returns the ones trained.

    ``reporter`` hears each probe's stages and epochs and one note per trained probe.
    """
    trained = []
    for task, out in zip(DEMO_TASKS, plan.probes, strict=True):
        if (out / "probe.json").exists():
            continue
        job = TrainJob(
            train=(plan.train,),
            dev=plan.dev,
            out=out,
            task=task,
            arch="linear",
            layer=DEMO_LAYER,
            config=TrainConfig(epochs=300, patience=10, lr=5e-3, seed=0),
            cache_dir=plan.home / "representations",
        )
        run_train_job(job, reporter=reporter)
        trained.append(out)
    return trained


#: Subdirectory of the demo's output that holds the ``tree`` preset's attack.
TREE_DIR = "tree"


def tree_config(plan: DemoPlan, *, limit: int | None = None) -> AttackConfig:
    """The demo's second attack: the same search with the ``tree`` validity preset
    (Jabberwocky nonwords that keep the gold tree by construction), to set beside the
    meaning-keeping one."""
    return demo_config(plan, limit=limit).with_preset(PRESETS.get("tree"))


def demo_config(plan: DemoPlan, *, limit: int | None = None) -> AttackConfig:
    """The demo's attack settings: the ``meaning`` validity preset (coPOS synonyms of
    each word's sense, kept when brittle's judges grade them meaning-kept) under a beam
    search."""
    return AttackConfig(
        treebank=str(plan.attack),
        probes=tuple(str(p) for p in plan.probes),
        search="beam",
        beam_width=2,
        budget=2,
        candidates=5,
        max_syntax_distance=0.2,
        parser="spacy",
        seed=0,
        limit=limit,
    ).with_preset(PRESETS.get("meaning"))
