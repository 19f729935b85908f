"""brittle's search loop against TextAttack's, on the same job and the same scorer.

What it measures: the search throughput (candidates scored per second) of
``run_attack`` against a plain TextAttack 0.3.11 loop (``textattack.Attack`` with
``BeamSearch(beam_width=4)`` or ``GreedySearch()``) that scores every candidate with
brittle's own scorer, so that the two differ in the search loop only. The job is
bench/guided_search.py's: the first 60 sentences of EWT test, La Malfa et al.'s
every-sense coPOS pool as recorded in ``data/bench-pool-tables.json`` (20 options per
position), tau 2, the spaCy syntax check at 0.2, the demo's MiniLM layer -5 distance
and POS probes (the objective their mean drop), a query budget of 100 per sentence.

The TextAttack loop is built from:

- a goal function (untargeted: no target output, it maximises the damage) whose score
  of a text is the damage of its brittle perturbation, computed by the scoring session
  of :class:`~brittle.engine.attack.chunk_search.ChunkSearch` (the call
  ``SearchProblem.score`` makes in a run: the probes' evaluator through the scores
  cache, the objective's weighted drop from the clean sentence);
- a transformation that offers, at each position of the sentence's recorded table, the
  same options in the same order (every table position and option of this job is one
  TextAttack word; any that is not is left out and counted);
- the constraints ``RepeatModification()``, ``MaxWordsPerturbed(max_num_words=2)`` and
  brittle's own ``syntax:0.2`` check (the same constraint object, parser and parse
  cache as the run, called as the run calls it) as a TextAttack constraint;
- the sentences' tables and caches made chunk by chunk (16 sentences) as the run makes
  them.

Where the two loops differ (the figures depend on it):

- Constraint placement. TextAttack checks its constraints on every transformed text
  before scoring it: it parses every candidate MaxWordsPerturbed lets through, and
  scores (and spends queries on) the feasible ones only. brittle scores every
  candidate first and parses lazily, in order of damage, until it has the beam's width
  of feasible ones (``first_feasible``): far fewer parses, but queries spent on
  infeasible candidates too. Both put the most damaging feasible candidates in the
  beam, so while the budget lasts they walk the same beams (ties in damage aside:
  brittle breaks them by expansion order, TextAttack by an unstable sort of its order).
- Batching. brittle searches the 16 sentences of a chunk side by side in lock-step
  rounds: one padded model pass for the waiting candidates of every sentence (the
  clean sentences included), one parser call for all their checks. TextAttack searches
  one sentence at a time: a model call for its clean sentence, one per beam step, and
  a parser call per beam text.
- Query counting. brittle counts a candidate once (cache hits are free) and cuts a
  step at the budget in expansion order (beam, then position, then option rank).
  TextAttack counts every text it asks about, cache hits and the duplicates two beams
  reach included, and cuts in its own order (per beam text, the candidates sorted by
  their text, as its constraint filter returns them). "Candidates scored" counts the
  distinct sentences the probes' model evaluated, the clean one included, in both
  loops (brittle's per-row ``queries``); the lines under the table give TextAttack's
  own count.
- The result. brittle keeps the most damaging feasible perturbation of every step;
  TextAttack's beam search returns the best of its last step, even when a one-word
  perturbation of the step before did more damage (the lines under the table give the
  mean of the best damage it scored).
- Greedy. brittle's greedy search ranks positions by their best single-substitution
  damage and extends only the next most important one; TextAttack's ``GreedySearch``
  is a beam of width one that extends every remaining position: more candidates, and
  not the same perturbations.
- Budget. brittle never expands a perturbation past tau; TextAttack builds the
  three-word texts of its last beam and lets MaxWordsPerturbed reject them.
- What is timed. brittle's seconds are the whole ``run_attack``: the search, the
  probes' predictions on each kept perturbation (one batched model call per chunk),
  ``results.jsonl`` and the reports (summary, plots, report.html); its search's
  seconds end as its last sentence's search does (``on_sentence``), before its
  chunk's kept perturbations are predicted and written, and before the reports.
  TextAttack's are its searches with the tables and scoring sessions they need,
  nothing written.

Both loops run in this process with the same components (the parser's helper process
included); models are loaded and both loops' beam search run once on 4 sentences
before the first timed run, and each search's runs alternate between the loops, the
order reversed every repeat (seconds are medians of ``--repeats``). Every table
position and option of this job is one TextAttack word; any that were not would be
left out of the TextAttack loop and counted under the table.

Install TextAttack beside the project, not into it (nothing downloads a model)::

    .venv/bin/python -m pip install --no-deps --target /tmp/ta-site textattack==0.3.11 \\
        lru-dict more-itertools num2words word2number pinyin langdetect \\
        language-tool-python toml editdistance Levenshtein rapidfuzz bert-score \\
        OpenHowNet anytree

Run: ``PYTHONPATH=/tmp/ta-site .venv/bin/python bench/textattack_loop.py [--ewt PATH]
[--sentences 60] [--repeats 2] [--no-syntax] [--probe DIR ...] [--device cuda]
[--write-doc]`` (about 12 minutes on 2 cores with the defaults, once the demo's probes
are trained: the first run trains them). Each run compares the loops twice: with the
syntax check, and with brittle's cheap ``budget`` constraint in its place (an empty
constraint list would mean the default, ``syntax:0.2``), so that what is compared is
the search loop and its scoring alone; ``--no-syntax`` runs only the second, its
figures kept in the file ``--measured`` names (the page's table holds both). The
figures go to ``docs/textattack.json`` (``--measured``; ``--render`` prints the tables
from it and runs nothing) and ``--write-doc`` writes the table into
docs/performance.md's generated block ``textattack``: run it with nothing else
running, the figures are the machine's.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import logging
import os
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from record_tables import EWT_TEST
from reproduce_common import add_doc_options, kept_figures, publish
from textattack_table import DOC, MEASURED, MODES, README, Measured, blocks, readme_block

from brittle.data import bench_pool_tables_path
from brittle.engine.attack import AttackComponents, AttackConfig, build_components, run_attack
from brittle.engine.attack.chunk_search import ChunkSearch
from brittle.engine.attack.preflight import stream_sentences
from brittle.engine.bench.workload import EVERY_SENSE_OPTIONS
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.demo import prepare_demo, train_demo_probes
from brittle.engine.reports.results import read_rows
from brittle.search.constraints import CandidateBatch
from brittle.search.problem import SearchProblem
from brittle.search.scoring import ScoringSession
from brittle.search.table import SubstitutionTable

#: How to install TextAttack for this script (beside the project, not into its venv).
INSTALL = (
    ".venv/bin/python -m pip install --no-deps --target /tmp/ta-site textattack==0.3.11 lru-dict "
    "more-itertools num2words word2number pinyin langdetect language-tool-python toml "
    "editdistance Levenshtein rapidfuzz bert-score OpenHowNet anytree, then run with "
    "PYTHONPATH=/tmp/ta-site"
)

#: The TextAttack modules the loop uses (imported by :func:`import_textattack`).
TEXTATTACK_MODULES = (
    "textattack.shared",  # first: it and textattack.goal_functions import each other
    "textattack.attack",
    "textattack.constraints.overlap",
    "textattack.constraints.pre_transformation",
    "textattack.goal_function_results",
    "textattack.goal_functions",
    "textattack.models.wrappers",
    "textattack.search_methods",
    "textattack.transformations",
)


def _stub_module(name: str, **attributes: object) -> types.ModuleType:
    """An empty package ``name`` holding ``attributes``, registered in sys.modules."""
    module = types.ModuleType(name)
    module.__path__ = []
    vars(module).update(attributes)
    sys.modules[name] = module
    return module


def _stub_flair() -> None:
    """Stand-ins for the three names textattack.shared imports from flair.

    flair (an NLP framework on torch with dozens of dependencies of its own) is imported
    at the top of textattack.shared only for the POS and NER taggers of AttackedText
    and of the PartOfSpeech constraint, which this loop never calls.
    """

    class Tokenizer:
        """Base class of TextAttack's flair tokenizer (never instantiated here)."""

    class Sentence:
        """flair's sentence (never instantiated here)."""

    class SequenceTagger:
        """flair's tagger (never loaded here)."""

    data = _stub_module("flair.data", Tokenizer=Tokenizer, Sentence=Sentence)
    models = _stub_module("flair.models", SequenceTagger=SequenceTagger)
    _stub_module("flair", data=data, models=models, device="cpu")


def import_textattack() -> None:
    """Import the TextAttack modules the loop uses, or exit with how to install them.

    The package's own ``__init__`` is not run: it imports every recipe, data set and
    augmenter (Hugging Face ``datasets``; ``StopwordModification()`` at import, which
    needs NLTK's stopwords corpus), none of which the loop uses. Its submodules are
    imported from the installed package directory as they are. flair and jieba are
    stood in for when missing (:func:`_stub_flair`; jieba, a Chinese word segmenter with
    19 MB of dictionaries, is called by ``words_from_text`` on CJK text only, and its
    failure falls back to splitting on spaces). TextAttack downloads NLTK data on its
    first import unless its marker file exists; the loop needs none of it and nothing
    may be downloaded, so the marker is written first.
    """
    spec = importlib.util.find_spec("textattack")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"textattack is not installed: {INSTALL}")
    if importlib.util.find_spec("flair") is None:
        _stub_flair()
    if importlib.util.find_spec("jieba") is None:
        _stub_module("jieba")
    cache = Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "post_install_check_3").touch()
    package = types.ModuleType("textattack")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    sys.modules["textattack"] = package
    # TextAttack configures logging with logging.config.dictConfig at import, which
    # disables every logger that exists already: they are enabled again after.
    enabled = [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.disabled
    ]
    try:
        for name in TEXTATTACK_MODULES:
            importlib.import_module(name)
    except ImportError as exc:
        sys.exit(f"textattack cannot be imported (no module {exc.name!r}): {INSTALL}")
    finally:
        for logger in enabled:
            logger.disabled = False
    # Its goal function warns that it knows no model for a custom goal function.
    logging.getLogger("textattack").setLevel(logging.ERROR)
    logging.getLogger("textattack.shared.utils.install").setLevel(logging.ERROR)


import_textattack()

# The modules are loaded by now; these bind their names.
from textattack.attack import Attack  # noqa: E402
from textattack.constraints import Constraint, PreTransformationConstraint  # noqa: E402
from textattack.constraints.overlap import MaxWordsPerturbed  # noqa: E402
from textattack.constraints.pre_transformation import RepeatModification  # noqa: E402
from textattack.goal_function_results import GoalFunctionResult  # noqa: E402
from textattack.goal_functions import GoalFunction  # noqa: E402
from textattack.models.wrappers import ModelWrapper  # noqa: E402
from textattack.search_methods import BeamSearch, GreedySearch, SearchMethod  # noqa: E402
from textattack.shared import AttackedText  # noqa: E402
from textattack.shared.utils import words_from_text  # noqa: E402
from textattack.transformations import Transformation  # noqa: E402

#: The attack_attrs key of the brittle perturbation a text stands for.
PERTURBATION = "brittle_perturbation"
#: The task whose drop is reported beside the damage.
UUAS = "distance.uuas"
#: Sentences whose tables and caches are made together, as ``run_attack`` makes them.
CHUNK = 16
#: The loops, in the order a repeat runs them (the next repeat reverses it).
LOOPS = ("brittle", "TextAttack")


class SentenceJob:
    """One sentence as the TextAttack loop sees it: its text, its options and brittle's
    scoring session and constraint check.

    Args:
        sentence: the sentence attacked.
        table: its recorded substitution table.
        search: the chunk's search (scores cache, objective, constraint services).
        budget: tau.
    """

    def __init__(
        self, sentence: Sentence, table: SubstitutionTable, search: ChunkSearch, budget: int
    ) -> None:
        self.sentence = sentence
        self.search = search
        self.session: ScoringSession = search.scorer.session(sentence, search.objective)
        self.problem = SearchProblem(
            table, budget, self.session, self.feasible, self.session.is_exhausted
        )
        self.text = AttackedText(" ".join(sentence.forms))
        # TextAttack's words of each form, in order (a punctuation mark has none, a URL
        # several): a position's word index is the count of words before it.
        counts = [len(words_from_text(form)) for form in sentence.forms]
        starts = list(itertools.accumulate(counts, initial=0))
        #: Per TextAttack word index, the table position and its options offered there.
        self.options: dict[int, tuple[int, tuple[tuple[str, str], ...]]] = {}
        #: Table options left out: a form or option that is not one TextAttack word.
        self.left_out = 0
        for position, options in table:
            form = sentence.forms[position]
            kept = tuple(o for o in options if words_from_text(o[0]) == [o[0]])
            if words_from_text(form) != [form] or not kept:
                self.left_out += len(options)
                continue
            self.left_out += len(options) - len(kept)
            self.options[starts[position]] = (position, kept)
        #: Candidates the constraint check saw.
        self.checked = 0
        #: The most damaging candidate the goal function scored (0.0: none).
        self.best_scored = 0.0

    def feasible(self, perturbations: Sequence[Perturbation]) -> NDArray[np.bool_]:
        """Which candidates satisfy the attack's constraints: the call a run's search
        makes (``RoundServices.check``, each constraint once for the batch)."""
        batch = CandidateBatch(
            self.sentence,
            tuple(perturbations),
            tuple(self.session.applied(p) for p in perturbations),
        )
        self.checked += len(batch)
        return self.search.services.check([batch])[0].mask

    def damage(self, texts: Sequence[AttackedText]) -> list[float]:
        """Damage of the perturbation each text stands for (the identity when none)."""
        empty = self.problem.empty()
        found = self.session([t.attack_attrs.get(PERTURBATION, empty) for t in texts])
        assert found.size == len(texts)  # the session has no query budget of its own
        if found.size:
            self.best_scored = max(self.best_scored, float(found.max()))
        return [float(d) for d in found]


class NoModel(ModelWrapper):
    """The goal function's model: it scores through brittle's session, never this."""

    model = None

    def __call__(self, text_input_list: list[str], **kwargs: object) -> list[float]:
        raise RuntimeError("the goal function scores through brittle's scoring session")


class DamageResult(GoalFunctionResult):
    """A goal function result whose output is the damage."""

    def get_text_color_input(self) -> str:
        return "red"

    def get_text_color_perturbed(self) -> str:
        return "blue"

    def get_colored_output(self, color_method: str | None = None) -> str:
        return f"{self.output:.4f}"


class BrittleDamage(GoalFunction):
    """Untargeted: no target output, the score of a text is the damage brittle's
    scorer gives its perturbation, maximised until the search ends."""

    def __init__(self, query_budget: int | None) -> None:
        budget = float("inf") if query_budget is None else query_budget
        super().__init__(NoModel(), maximizable=True, query_budget=budget)
        self.job: SentenceJob | None = None

    def _call_model_uncached(self, attacked_text_list: list[AttackedText]) -> list[float]:
        assert self.job is not None
        return self.job.damage(attacked_text_list) if attacked_text_list else []

    def _is_goal_complete(self, model_output: float, attacked_text: AttackedText) -> bool:
        return False

    def _get_score(self, model_output: float, attacked_text: AttackedText) -> float:
        return model_output

    def _goal_function_result_type(self) -> type[DamageResult]:
        return DamageResult

    def _process_model_outputs(self, inputs: list[str], outputs: list[float]) -> list[float]:
        return outputs


class TableSwap(Transformation):
    """The recorded table's options at the positions the brittle problem allows, each
    text carrying the brittle perturbation it stands for."""

    def __init__(self) -> None:
        self.job: SentenceJob | None = None

    def _get_transformations(
        self, current_text: AttackedText, indices_to_modify: set[int]
    ) -> list[AttackedText]:
        job = self.job
        assert job is not None
        base = current_text.attack_attrs.get(PERTURBATION, job.problem.empty())
        out = []
        for index, (position, options) in job.options.items():
            if index not in indices_to_modify:
                continue
            for option in options:
                text = current_text.replace_word_at_index(index, option[0])
                text.attack_attrs[PERTURBATION] = job.problem.substitute(base, position, option)
                out.append(text)
        return out


class BrittleConstraints(Constraint):
    """brittle's constraints (``syntax:0.2``) on a batch of transformed texts."""

    def __init__(self) -> None:
        super().__init__(compare_against_original=True)
        self.job: SentenceJob | None = None

    def _check_constraint_many(
        self, transformed_texts: list[AttackedText], reference_text: AttackedText
    ) -> list[AttackedText]:
        assert self.job is not None
        if not transformed_texts:
            return []
        mask = self.job.feasible([t.attack_attrs[PERTURBATION] for t in transformed_texts])
        return [t for t, ok in zip(transformed_texts, mask.tolist(), strict=True) if ok]

    def _check_constraint(
        self, transformed_text: AttackedText, reference_text: AttackedText
    ) -> bool:
        return bool(self._check_constraint_many([transformed_text], reference_text))


def run_brittle(config: AttackConfig, components: AttackComponents, out: Path) -> Measured:
    """``run_attack`` with ``components``, timed, and what its rows say."""
    last_row: list[float] = []

    def on_sentence(progress: object, total: int) -> None:
        last_row[:] = [time.perf_counter()]

    start = time.perf_counter()
    run_attack(config, out, components=components, on_sentence=on_sentence)
    seconds = time.perf_counter() - start
    rows = list(read_rows(out / "results.jsonl"))
    n = len(rows)
    return Measured(
        sentences=n,
        candidates=sum(r.queries for r in rows),
        seconds=seconds,
        search_seconds=last_row[0] - start,
        uuas=sum(r.tasks[UUAS].drop or 0.0 for r in rows) / n,
        damage=sum(r.damage for r in rows) / n,
        checked=sum(r.syntax_checked for r in rows),
    )


def textattack_attack(
    config: AttackConfig,
) -> tuple[Attack, BrittleDamage, TableSwap, BrittleConstraints]:
    """The TextAttack attack of ``config``'s search, and its three brittle-backed parts."""
    goal = BrittleDamage(config.query_budget)
    swap = TableSwap()
    syntax = BrittleConstraints()
    method: SearchMethod = (
        BeamSearch(beam_width=config.beam_width) if config.search == "beam" else GreedySearch()
    )
    constraints: list[Constraint | PreTransformationConstraint] = [
        RepeatModification(),
        MaxWordsPerturbed(max_num_words=config.budget),
        syntax,
    ]
    return Attack(goal, constraints, swap, method), goal, swap, syntax


def run_textattack(
    config: AttackConfig, components: AttackComponents, sentences: Sequence[Sentence]
) -> Measured:
    """The TextAttack loop on ``sentences``, timed (tables and caches made chunk by chunk
    as ``run_attack`` makes them)."""
    attack, goal, swap, syntax = textattack_attack(config)
    start = time.perf_counter()
    search = ChunkSearch(config, components, cache_size=100_000, lockstep=False, quality=None)
    uuas = search.scorer.tasks.index(UUAS)
    weights = search.objective.vector(search.scorer.tasks)
    candidates = checked = left_out = own = 0
    drops: list[float] = []
    damages: list[float] = []
    best: list[float] = []
    for first in range(0, len(sentences), CHUNK):
        for sentence_search in search.searches(sentences[first : first + CHUNK], first):
            job = SentenceJob(
                sentence_search.sentence, sentence_search.table, search, config.budget
            )
            goal.job = swap.job = syntax.job = job
            result = attack.attack(job.text, 0)
            kept = result.perturbed_result.attacked_text.attack_attrs.get(
                PERTURBATION, job.problem.empty()
            )
            drop = job.session.clean - job.session.metrics_of(kept)
            drops.append(float(drop[uuas]))
            damages.append(float(drop @ weights))
            best.append(job.best_scored)
            candidates += job.session.queries
            own += goal.num_queries
            checked += job.checked
            left_out += job.left_out
    seconds = time.perf_counter() - start
    n = len(drops)
    return Measured(
        sentences=n,
        candidates=candidates,
        seconds=seconds,
        uuas=sum(drops) / n,
        damage=sum(damages) / n,
        best_scored=sum(best) / n,
        checked=checked,
        own_queries=own,
        left_out=left_out,
    )


def median_run(runs: Sequence[Measured]) -> Measured:
    """The first run with the median seconds of all, whole and to the search's end (the
    other figures do not vary)."""
    searched = [r.search_seconds for r in runs if r.search_seconds is not None]
    return replace(
        runs[0],
        seconds=statistics.median(r.seconds for r in runs),
        search_seconds=statistics.median(searched) if searched else None,
    )


def markdown(results: dict[str, dict[str, Measured]]) -> list[str]:
    """The table, and per search the lines that explain its drops and checks."""
    lines = [
        "| search | sentences | brittle candidates | brittle s | brittle candidates/s "
        "| TextAttack candidates | TextAttack s | TextAttack candidates/s "
        "| brittle / TextAttack | brittle UUAS drop | TextAttack UUAS drop |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    notes = []
    for search, loops in results.items():
        b, t = loops["brittle"], loops["TextAttack"]
        b_rate, t_rate = b.candidates / b.seconds, t.candidates / t.seconds
        lines.append(
            f"| {search} | {b.sentences} | {b.candidates:,} | {b.seconds:.1f} | {b_rate:.1f} "
            f"| {t.candidates:,} | {t.seconds:.1f} | {t_rate:.1f} | {b_rate / t_rate:.2f}x "
            f"| {b.uuas:.4f} | {t.uuas:.4f} |"
        )
        notes.append(
            f"{search}: mean damage brittle {b.damage:.4f}, TextAttack {t.damage:.4f} "
            f"(best it scored {t.best_scored or 0.0:.4f}); candidates syntax-checked "
            f"brittle {b.checked:,}, TextAttack {t.checked:,}; TextAttack's own query "
            f"count {t.own_queries or 0:,}"
            + (f"; {t.left_out} table options not offered to TextAttack" if t.left_out else "")
        )
    return [*lines, "", *notes]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Both loops on both searches under each constraint setting asked for (module
    docstring), as ``{"sentences", "cores", "device", "modes": {mode: {search: {loop:
    Measured as a dict}}}}``."""
    probes: list[Path] = args.probe
    if not probes:
        plan = prepare_demo()
        train_demo_probes(plan)
        probes = list(plan.probes)
    modes = {"budget only": MODES["budget only"]} if args.no_syntax else MODES
    out: dict[str, Any] = {}
    components: dict[str, AttackComponents] = {}
    for mode, constraints in modes.items():
        base = AttackConfig(
            treebank=str(args.ewt),
            probes=tuple(str(p) for p in probes),
            method="recorded",
            generator_options=(f"tables={bench_pool_tables_path()}",),
            budget=2,
            candidates=EVERY_SENSE_OPTIONS,
            parser="spacy",
            constraints=constraints,
            limit=args.sentences,
            query_budget=100,
        )
        sentences = list(stream_sentences(base))
        configs = {s: replace(base, search=s) for s in ("beam", "greedy")}
        for search, config in configs.items():
            components[search] = build_components(
                config, reuse=components.get("beam"), device=args.device
            )
        runs: dict[str, dict[str, list[Measured]]] = {
            s: {loop: [] for loop in LOOPS} for s in configs
        }
        with tempfile.TemporaryDirectory() as tmp:
            warm = replace(configs["beam"], limit=4)
            run_brittle(warm, components["beam"], Path(tmp) / "warm")
            run_textattack(warm, components["beam"], sentences[:4])
            k = 0
            for repeat in range(args.repeats):
                order = LOOPS if repeat % 2 == 0 else LOOPS[::-1]
                for search, config in configs.items():
                    for loop in order:
                        k += 1
                        if loop == "brittle":
                            measured = run_brittle(config, components[search], Path(tmp) / str(k))
                        else:
                            measured = run_textattack(config, components[search], sentences)
                        runs[search][loop].append(measured)
                        print(
                            f"{mode}, {search} {loop}: {measured.candidates:,} candidates "
                            f"in {measured.seconds:.1f} s",
                            file=sys.stderr,
                            flush=True,
                        )
        out[mode] = {
            s: {loop: asdict(median_run(r)) for loop, r in loops.items()}
            for s, loops in runs.items()
        }
    return {
        "sentences": args.sentences,
        "cores": os.cpu_count(),
        "device": args.device or "cpu",
        "modes": out,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewt", type=Path, default=EWT_TEST, help="EWT test CoNLL-U")
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per loop")
    parser.add_argument(
        "--no-syntax",
        action="store_true",
        help="only the runs with the cheap budget check in place of the syntax check (the "
        "search loops and their scoring alone)",
    )
    parser.add_argument(
        "--probe",
        action="append",
        type=Path,
        default=[],
        help="a probe directory (repeatable; default: the demo's two, trained if missing)",
    )
    parser.add_argument("--device", default=None, help="torch device of the probes' model")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.no_syntax and not args.render and (args.write_doc or args.measured == MEASURED):
        parser.error(
            "--no-syntax measures one of the page's two settings: give --measured FILE "
            "for its figures, and leave out --write-doc"
        )
    data = kept_figures(args, lambda: measure(args))
    for mode, searches in data["modes"].items():
        results = {
            s: {loop: Measured(**m) for loop, m in loops.items()} for s, loops in searches.items()
        }
        print(f"{mode}:\n" + "\n".join(markdown(results)) + "\n")
    publish(blocks(data), DOC, write=args.write_doc)
    publish(readme_block(data), README, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
