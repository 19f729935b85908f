"""Each paper's own numbers beside brittle's: the comparison tables of docs/reproductions.md.

Every claim compared is a :class:`Claim` below: the paper's number as its text gives it
(with the table, section or figure it comes from, and the paper's setting), the brittle
measurement that answers it (and brittle's setting), and how the two are compared. The
verdict is computed, never typed, and is one of four:

- **reproduced**: the numbers agree. For a number, the paper's value lies in brittle's
  95% interval, or brittle's value in the paper's own spread (its ± over corpora), or,
  where neither interval exists, within the claim's stated tolerance; for a claim the
  paper makes about a sign or an ordering only, brittle's sign agrees and its interval
  excludes zero; for a range, brittle's value lies in it.
- **direction only**: the sign agrees (brittle's interval excludes zero) but the size
  does not, or the paper gives no number to compare the size with.
- **not reproduced**: brittle's sign is the other one or not established, or a claimed
  equality, threshold or range is missed.
- **not testable here**: what the claim needs (a model, a language, a data set) is not
  available offline; why is said.

``python bench/reproduce_papers.py --work reproduce`` reads the JSON tables the other
steps wrote into ``WORK/tables``, keeps brittle's numbers for every claim in
``docs/reproductions.json`` and prints the comparison tables; ``--render`` prints them
from ``docs/reproductions.json`` alone (what the test of the page checks), and
``--write-doc`` also puts them into ``docs/reproductions.md``, which holds them between
``<!-- generated: NAME -->`` and ``<!-- end generated -->`` lines.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from reproduce_common import add_doc_options, kept_figures, publish

from brittle.scorers.order import order_scores_batch

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "reproductions.json"
DOC = ROOT / "docs" / "reproductions.md"

REPRODUCED = "reproduced"
DIRECTION = "direction only"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
VERDICTS = (REPRODUCED, DIRECTION, NOT_REPRODUCED, NOT_TESTABLE)

#: Header of every comparison table.
HEADER = (
    "| # | claim | where | paper's setting | paper | brittle | brittle's setting | verdict |\n"
    "| --- | --- | --- | --- | ---: | ---: | --- | --- |"
)

Tables = dict[str, Any]
Measured = dict[str, Any]


@dataclass(frozen=True)
class Claim:
    """One number (or sign, range, equality) of a paper against brittle's.

    Attributes:
        id: stable key in ``docs/reproductions.json``.
        paper: the section it belongs to (a key of :data:`PAPERS`).
        claim: what is claimed, in a few words.
        where: table, section or figure of the paper.
        setting: the paper's setting (model, layer, data, probe, metric).
        shown: the paper's number as the table shows it.
        brittle: brittle's setting.
        compare: ``value``, ``sign``, ``range``, ``equal`` or ``at_least``.
        value: the paper's number (``value``, ``equal``, ``at_least``), sign (``sign``:
            +1 or -1) or ``(low, high)`` (``range``); a tuple of numbers for ``value``
            compares each.
        spread: the paper's ± (its standard deviation over corpora), for ``value``.
        tolerance: absolute (``value``) or relative (``equal``) slack when brittle has
            no interval.
        capped: why the best verdict is "direction only" (the paper gives no number).
        untestable: why the claim cannot be tested here.
        measure: brittle's measurement from the step tables (``None``: untestable).
        quotes: the words and numbers of ``shown`` as the paper's text has them
            (whitespace aside), which the test of the page finds in it.
    """

    id: str
    paper: str
    claim: str
    where: str
    setting: str
    shown: str
    brittle: str
    compare: str = "value"
    value: Any = None
    spread: float = 0.0
    tolerance: float = 0.0
    capped: str = ""
    untestable: str = ""
    measure: Callable[[Tables], Measured] | None = None
    quotes: tuple[str, ...] = ()


# ------------------------------------------------------------------ measurements
def num(
    value: float, low: float | None = None, high: float | None = None, fmt: str = ".3f"
) -> Measured:
    """A measurement with its 95% interval (when there is one)."""
    text = format(value, fmt)
    if low is not None and high is not None:
        text += f" [{format(low, fmt)}, {format(high, fmt)}]"
    return {"value": value, "low": low, "high": high, "text": text}


def fragility(
    method: str, column: str, tau: int = 2, model: str = "minilm2"
) -> Callable[[Tables], Measured]:
    """Worst-case drop of a task at tau (Algorithm 3) with its interval and, where the
    rows record it, its null (the largest gain among the same draws) with the interval
    of the drop's excess over it, which then decides whether the sign is established."""

    def get(t: Tables) -> Measured:
        cell = t["fragility"][model][method][str(tau)]["tasks"][column]
        out = num(cell["worst"], cell["ci_low"], cell["ci_high"])
        null = cell.get("null")
        if null is not None and not math.isnan(null):
            out["text"] += f"; null {null:.3f}"
            out["excess"] = (cell["excess_low"], cell["excess_high"])
        return out

    return get


def pos_words(method: str) -> Callable[[Tables], Measured]:
    """POS drop in words per sentence at tau 2 (the paper's "# Words Adv")."""

    def get(t: Tables) -> Measured:
        v, lo, hi = t["fragility"]["minilm2"][method]["2"]["tasks"]["pos.pos_acc"]["words"]
        return num(v, lo, hi, ".2f")

    return get


def cosine(method: str) -> Callable[[Tables], Measured]:
    """Epsilon (Algorithm 2): mean over sentences of the lowest cosine at tau 2."""
    return lambda t: num(t["fragility"]["minilm2"][method]["2"]["epsilon_cosine"])


def ratio(
    a: Callable[[Tables], Measured], b: Callable[[Tables], Measured]
) -> Callable[[Tables], Measured]:
    """The ratio of two measurements (no interval). Two worst-of-b drops are compared
    as the paper compares them, raw; ``unfounded`` names the ones whose excess over
    their null has an interval reaching 0, which the verdict says."""

    def get(t: Tables) -> Measured:
        first, second = a(t), b(t)
        x, y = first["value"], second["value"]
        m = num(x / y, fmt=".2f")
        m["text"] = f"{x / y:.2f} ({x:.3f} / {y:.3f})"
        m["unfounded"] = [
            f"{part['value']:.3f}"
            for part in (first, second)
            if "excess" in part and part["excess"][0] <= 0 <= part["excess"][1]
        ]
        return m

    return get


def relative_uuas_drop(t: Tables) -> Measured:
    cell = t["fragility"]["minilm2"]["copos"]["3"]["tasks"]["distance.uuas"]
    m = num(cell["worst"] / cell["clean"], fmt=".1%")
    m["text"] = f"{cell['worst'] / cell['clean']:.1%} ({cell['clean']:.3f} → −{cell['worst']:.3f})"
    return m


def glove_clean(t: Tables) -> Measured:
    g = t["fragility"]["glove"]["copos"]["2"]["tasks"]["distance.uuas"]["clean"]
    m = t["fragility"]["minilm2"]["copos"]["2"]["tasks"]["distance.uuas"]["clean"]
    out = num(g / m, fmt=".2f")
    out["text"] = f"{g / m:.2f} (UUAS {g:.3f} / {m:.3f})"
    return out


def tale(layer: str, metric: str, model: str = "minilm") -> Callable[[Tables], Measured]:
    """Perceptron minus structural probe at a hidden state of ``model`` (``last``: its
    highest in the table), with its interval."""

    def get(t: Tables) -> Measured:
        rows = t["probe_parser"]["rows"]
        mine = [r for r in rows if r["model"] == model]
        index = max(r["layer"] for r in mine) if layer == "last" else int(layer)
        (row,) = [r for r in mine if r["layer"] == index]
        v, lo, hi = row["lead"][metric]
        return num(v, lo, hi, "+.3f")

    return get


def jab_drop(probe: str, metric: str) -> Callable[[Tables], Measured]:
    """Plain minus Jabberwocky score of a kept probe, with its paired interval."""

    def get(t: Tables) -> Measured:
        j = t["jabberwocky"]
        name = probe.format(**{k: v for k, v in j["best_layer"].items()})
        m = j["rows"][name]["metrics"][metric]
        return num(m["drop"], m["ci_low"], m["ci_high"])

    return get


def jab_shrink(t: Tables) -> Measured:
    j = t["jabberwocky"]
    name = f"minilm{j['best_layer']['distance']}-distance"
    lead = j["lead_over_majority"][name]["dspr"]
    m = num(lead["shrink"], fmt=".0%")
    m["text"] = f"{lead['shrink']:.0%} ({lead['plain']:.3f} → {lead['jabberwocky']:.3f})"
    return m


def jab_margin(t: Tables, probe: str, metric: str, over: str) -> tuple[float, float, float]:
    """Jabberwocky score of ``probe`` minus the best of ``over`` (names in the rows)."""
    rows = t["jabberwocky"]["rows"]
    mine = rows[probe]["metrics"][metric]["perturbed"]
    best = max(rows[o]["metrics"][metric]["perturbed"] for o in over.split(","))
    return mine - best, mine, best


#: SmolLM2's probes in the Jabberwocky table (the hidden state of reproduce_common).
JAB_SMOLLM2 = "smollm2-30-{task}"


def jab_lead(probe: str, metric: str, over: str, text: str) -> Callable[[Tables], Measured]:
    """Jabberwocky ``metric`` of ``probe`` (a name of the table, formatted with the kept
    layers: ``minilm{perceptron}-perceptron``) minus the best of ``over``; ``text``
    formats the cell from ``d``, ``mine`` and ``best``."""

    def get(t: Tables) -> Measured:
        name = probe.format(**t["jabberwocky"]["best_layer"])
        d, mine, best = jab_margin(t, name, metric, over)
        m = num(d, fmt="+.3f")
        m["text"] = text.format(d=d, mine=mine, best=best)
        return m

    return get


def jab_over_baselines(probe: str) -> Callable[[Tables], Measured]:
    """Jabberwocky UUAS of ``probe`` over the better of Path and Majority."""
    return jab_lead(probe, "uuas", "path,majority", "{d:+.3f} ({mine:.3f} vs {best:.3f})")


def jab_structural_vs_path(probe: str) -> Callable[[Tables], Measured]:
    """Jabberwocky DSpr of the structural probe ``probe`` minus Path's."""
    return jab_lead(probe, "dspr", "path", "{d:+.3f} ({mine:.3f} vs Path {best:.3f})")


def jab_over_control(control: str, label: str) -> Callable[[Tables], Measured]:
    """Jabberwocky UUAS of MiniLM's kept perceptron minus the perceptron of ``control``
    (a probe of the table), named ``label`` in the text."""
    return jab_lead(
        "minilm{perceptron}-perceptron",
        "uuas",
        control,
        "{d:+.3f} over " + label + " ({mine:.3f} vs {best:.3f})",
    )


#: Clouatre et al.'s Listing 1 (Appendix C): the character permutations of "This is a
#: test" they work through, and the IDC and DND they print (two decimals).
LISTING_1 = {
    "split along the middle": ([8, 9, 10, 11, 12, 13, 0, 1, 2, 3, 4, 5, 6, 7], (0.49, 0.08)),
    "word shuffle": ([10, 11, 12, 13, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4], (0.46, 0.15)),
    "neighbour flips": ([1, 0, 2, 4, 5, 3, 7, 6, 8, 9, 10, 12, 11, 13], (0.05, 0.76)),
}


def listing(name: str) -> Callable[[Tables], Measured]:
    """brittle's IDC and DND of one Listing 1 permutation (no treebank needed)."""

    def get(t: Tables) -> Measured:
        perm = np.asarray(LISTING_1[name][0], dtype=np.int64)
        dnd, idc = order_scores_batch([perm])
        pair = [round(float(idc[0]), 4), round(float(dnd[0]), 4)]
        return {"value": pair, "low": None, "high": None, "text": f"{pair[0]:.3f}, {pair[1]:.3f}"}

    return get


def word_order_rows(t: Tables, level: str) -> list[dict[str, Any]]:
    return [r for r in t["word_order"]["rows"] if r["grid"] == "paper" and r["level"] == level]


def word_dnd_max(t: Tables) -> Measured:
    rows = word_order_rows(t, "word")
    worst = max(rows, key=lambda r: r["dnd_chars"])
    m = num(worst["dnd_chars"])
    m["text"] = f"{worst['dnd_chars']:.3f} (highest: {worst['perturbation']})"
    return m


def char_dnd_span(t: Tables) -> Measured:
    rows = word_order_rows(t, "character")
    lo, hi = min(r["dnd_chars"] for r in rows), max(r["dnd_chars"] for r in rows)
    return {"value": [lo, hi], "low": None, "high": None, "text": f"{lo:.3f}–{hi:.3f}"}


def phrase_vs_shuffle(measure: str) -> Callable[[Tables], Measured]:
    """Word-level random-cut phrase shuffle against the full shuffle."""

    def get(t: Tables) -> Measured:
        rows = {r["method"]: r for r in word_order_rows(t, "word")}
        a, b = rows["phrase-shuffle"][measure], rows["shuffle"][measure]
        if measure == "idc_chars":
            m = num(a / b, fmt=".2f")
            m["text"] = f"{a / b:.2f} ({a:.3f} / {b:.3f})"
        else:
            m = num(b - a, fmt="+.3f")
            m["text"] = f"{b - a:+.3f} ({b:.3f} − {a:.3f})"
        return m

    return get


def dnd_lead(t: Tables) -> Measured:
    leads = t["damage"]["dnd_minus_idc"]
    (name,) = [n for n in leads if "distance" in n]
    v, lo, hi = leads[name]["chars"]
    return num(v, lo, hi, "+.3f")


def agreement_share(experiment: str) -> Callable[[Tables], Measured]:
    def get(t: Tables) -> Measured:
        c = t["agreement"]["counts"][experiment]
        m = num(c["significant"] / c["conditions"], fmt=".2f")
        m["text"] = f"{c['significant']} of {c['conditions']}"
        return m

    return get


def agreement_table4(t: Tables) -> Measured:
    (row,) = [r for r in t["agreement"]["hardest"] if str(r["experiment"]) == "2"]
    return num(float(row["accuracy"]), fmt=".2f")


# ------------------------------------------------------------------ the claims
LM_SET = "BERT layer -5, 3-layer MLP probes, mean ± sd over 6 English corpora"
LM_SET5 = "BERT layer -5, linear probes (the table's caption), mean ± sd over 6 English corpora"
LM_BRITTLE = (
    "MiniLM hidden state 2 (layer -5), linear probes, EWT test (first 100; coCO 20); "
    "coPOS draws from every WordNet sense, as theirs"
)
LM_SMOLLM2 = (
    "SmolLM2-135M hidden state 30 (the last; a causal LM, which the paper does not probe), "
    "standardised linear probes, EWT test (first 100); coPOS as theirs"
)
LM_SENTENCE = (
    "MiniLM hidden state 2 (layer -5), La Malfa et al.'s sentence probe: one network of "
    "3 hidden layers (1,024 units) over the whole sentence cut or padded to 20 words; "
    "LinES train + EWT dev and EWT test (first 100) cut to 20 words; coPOS as theirs"
)
TALE_SET = "mBERT final layer, UD 2.4 EWT, rank/lr/dropout searched"
TALE_BRITTLE = "MiniLM, LinES train + EWT dev → EWT test, full rank"
#: SmolLM2's probes, as the probe-vs-parser and Jabberwocky tables train them.
SMOLLM2_PROBES = (
    "SmolLM2-135M hidden state 30 (the last; a causal LM), standardised linear probes, "
    "LinES train + EWT dev → EWT test"
)
JAB_SET = "BERT, GPT-2, RoBERTa large at their best layer; EWT train → EWT test"
#: How brittle's Jabberwocky EWT test is made: the paper's kind of pseudoword and slots.
JAB_WORDS = "; monosyllabic nonwords in the paper's slots"
JAB_BRITTLE = "MiniLM at its best layer (dev loss); LinES train + EWT dev → EWT test" + JAB_WORDS
CL_BRITTLE = "EWT test, 2,077 sentences, seed 0; DND/IDC over characters"
CR_SET = "GPT-2 small and medium; the paper's stimuli"
CR_BRITTLE = "SmolLM2-135M (causal); brittle's stimuli, 20 items per cell"

#: La Malfa et al.'s UUAS drops, tau 2: coPOS (Table 1) and random words (Table 5).
LM_COPOS_UUAS = Claim(
    "lm-copos-uuas",
    "lamalfa",
    "coPOS: UUAS drop",
    "Table 1.1",
    LM_SET,
    "0.2451 ± 0.1212",
    LM_BRITTLE,
    value=0.2451,
    spread=0.1212,
    measure=fragility("copos", "distance.uuas"),
    quotes=("0.2451", "0.1212"),
)
LM_RANDOM_UUAS = Claim(
    "lm-random-uuas",
    "lamalfa",
    "random words: UUAS drop",
    "Table 5.1",
    LM_SET5,
    "0.2599 ± 0.1287",
    LM_BRITTLE,
    value=0.2599,
    spread=0.1287,
    measure=fragility("random", "distance.uuas"),
    quotes=("0.2599", "0.1287", "four linear probing tasks"),
)


def on_causal_lm(claim: Claim, method: str) -> Claim:
    """``claim`` (a UUAS drop of ``method``) measured on SmolLM2's probes instead."""
    return replace(
        claim,
        id=f"{claim.id}-causal",
        claim=f"{claim.claim}, a causal LM",
        brittle=LM_SMOLLM2,
        measure=fragility(method, "distance.uuas", model="smollm2-30"),
    )


def with_sentence_probe(claim: Claim, method: str, column: str) -> Claim:
    """``claim`` measured with the paper's probe over the sentence cut to 20 words (their
    Tables 1-2 use it; Table 5's caption says linear probes, so there it is one more
    setting changed, named in the row)."""
    return replace(
        claim,
        id=f"{claim.id}-sentence",
        claim=f"{claim.claim}, sentence probe",
        brittle=LM_SENTENCE,
        measure=fragility(method, column, model="minilm2-sentence"),
    )


TALE_UUAS_LAST = Claim(
    "tale-uuas-last",
    "tale",
    "the parser's UUAS lead, final layer",
    "§5, Fig. 2a",
    TALE_SET,
    "+0.111",
    TALE_BRITTLE + ", hidden state 6 (final)",
    value=0.111,
    measure=tale("last", "uuas"),
    quotes=("by 11.1 UUAS points", "final hidden layer"),
)

TALE_DSPR_LAST = Claim(
    "tale-dspr-last",
    "tale",
    "the structural probe wins DSpr, final layer",
    "§5, Fig. 2b",
    TALE_SET + "; every language",
    "< 0",
    TALE_BRITTLE + ", hidden state 6 (final)",
    compare="sign",
    value=-1,
    measure=tale("last", "dspr"),
    quotes=("the structural probe outperforms the parser on all languages",),
)

TALE_PRIM_LAST = Claim(
    "tale-prim-last",
    "tale",
    "after Prim + Floyd-Warshall the DSpr gap ≈ 0, final layer",
    "§5, Fig. 3",
    TALE_SET + "; mean of 9 languages",
    "+0.0006",
    TALE_BRITTLE + ", hidden state 6 (final)",
    value=0.0006,
    tolerance=0.01,
    measure=tale("last", "dspr_prim"),
    quotes=("just 0.0006",),
)


def tale_on_causal_lm(claim: Claim, metric: str) -> Claim:
    """``claim`` (the perceptron's lead on ``metric`` at the final layer) at SmolLM2's."""
    return replace(
        claim,
        id=f"{claim.id}-causal",
        claim=f"{claim.claim}, a causal LM",
        brittle=SMOLLM2_PROBES + " (final); the paper probes no causal LM",
        measure=tale("last", metric, model="smollm2"),
    )


CLAIMS: tuple[Claim, ...] = (
    # La Malfa et al.: Tables 1 (coPOS), 2 (coCO), 5 (random words), tau = 2.
    LM_COPOS_UUAS,
    Claim(
        "lm-copos-root",
        "lamalfa",
        "coPOS: root accuracy drop",
        "Table 1.2",
        LM_SET,
        "0.6039 ± 0.1383",
        LM_BRITTLE,
        value=0.6039,
        spread=0.1383,
        measure=fragility("copos", "root.root_acc"),
        quotes=("0.6039", "0.1383"),
    ),
    Claim(
        "lm-copos-depth",
        "lamalfa",
        "coPOS: tree-depth accuracy drop",
        "Table 1.2",
        LM_SET,
        "0.3314 ± 0.2401",
        LM_BRITTLE,
        value=0.3314,
        spread=0.2401,
        measure=fragility("copos", "tree-depth.tree_depth_acc"),
        quotes=("0.3314", "0.2401"),
    ),
    Claim(
        "lm-copos-pos",
        "lamalfa",
        "coPOS: POS, words lost per sentence",
        "Table 1.1",
        LM_SET + " (sentences cut to 20 words)",
        "3.243 ± 3.0814",
        LM_BRITTLE + "; accuracy drop × sentence length",
        value=3.243,
        spread=3.0814,
        measure=pos_words("copos"),
        quotes=("3.243", "3.0814", "we cut (pad) the sentences longer"),
    ),
    Claim(
        "lm-copos-cos",
        "lamalfa",
        "coPOS: cosine of the farthest draw",
        "Table 1.3",
        LM_SET,
        "0.926 ± 0.0196",
        LM_BRITTLE + "; mean over sentences",
        value=0.926,
        spread=0.0196,
        measure=cosine("copos"),
        quotes=("0.926", "0.0196"),
    ),
    Claim(
        "lm-copos-l2",
        "lamalfa",
        "coPOS: L2 distance of the farthest draw",
        "Table 1.3",
        LM_SET,
        "0.0388 ± 0.0045",
        LM_BRITTLE,
        untestable="the paper does not say how its L2 distance is normalised (brittle's, in "
        "the tables below, is not normalised)",
        quotes=("0.0388", "0.0045"),
    ),
    Claim(
        "lm-coco-uuas",
        "lamalfa",
        "coCO: UUAS drop",
        "Table 2.1",
        LM_SET + "; GPT-2 fills",
        "0.267 ± 0.1293",
        LM_BRITTLE + "; SmolLM2 fills",
        value=0.267,
        spread=0.1293,
        measure=fragility("coco", "distance.uuas"),
        quotes=("0.267", "0.1293"),
    ),
    Claim(
        "lm-coco-root",
        "lamalfa",
        "coCO: root accuracy drop",
        "Table 2.2",
        LM_SET,
        "0.6374 ± 0.1483",
        LM_BRITTLE,
        value=0.6374,
        spread=0.1483,
        measure=fragility("coco", "root.root_acc"),
        quotes=("0.6374", "0.1483"),
    ),
    Claim(
        "lm-coco-cos",
        "lamalfa",
        "coCO: cosine of the farthest draw",
        "Table 2.3",
        LM_SET,
        "0.8432 ± 0.0316",
        LM_BRITTLE,
        value=0.8432,
        spread=0.0316,
        measure=cosine("coco"),
        quotes=("0.8432", "0.0316"),
    ),
    LM_RANDOM_UUAS,
    Claim(
        "lm-random-root",
        "lamalfa",
        "random words: root accuracy drop",
        "Table 5.2",
        LM_SET5,
        "0.6466 ± 0.1421",
        LM_BRITTLE,
        value=0.6466,
        spread=0.1421,
        measure=fragility("random", "root.root_acc"),
        quotes=("0.6466", "0.1421"),
    ),
    Claim(
        "lm-random-cos",
        "lamalfa",
        "random words: cosine of the farthest draw",
        "Table 5.3",
        LM_SET5,
        "0.8059 ± 0.0299",
        LM_BRITTLE,
        value=0.8059,
        spread=0.0299,
        measure=cosine("random"),
        quotes=("0.8059", "0.0299"),
    ),
    Claim(
        "lm-copos-vs-random",
        "lamalfa",
        "coPOS hurts as much as random words (UUAS drop ratio)",
        "Tables 1.1, 5.1",
        LM_SET,
        "0.94 (0.2451 / 0.2599)",
        LM_BRITTLE,
        compare="equal",
        value=0.2451 / 0.2599,
        tolerance=0.2,
        measure=ratio(fragility("copos", "distance.uuas"), fragility("random", "distance.uuas")),
        quotes=("0.2451", "0.2599"),
    ),
    Claim(
        "lm-coco-vs-copos",
        "lamalfa",
        "coCO hurts as much as coPOS (UUAS drop ratio)",
        "Tables 1.1, 2.1",
        LM_SET,
        "1.09 (0.267 / 0.2451)",
        LM_BRITTLE,
        compare="equal",
        value=0.267 / 0.2451,
        tolerance=0.2,
        measure=ratio(fragility("coco", "distance.uuas"), fragility("copos", "distance.uuas")),
        quotes=("0.267", "0.2451"),
    ),
    Claim(
        "lm-half",
        "lamalfa",
        "coPOS at tau 3 takes more than half of UUAS",
        "§6.2, Fig. 10",
        "every model and corpus, tau = 3",
        "> 50%",
        LM_BRITTLE + ", tau 3",
        compare="at_least",
        value=0.5,
        measure=relative_uuas_drop,
        quotes=("decrease in UUAS of more than 50% on any task",),
    ),
    Claim(
        "lm-glove-brittle",
        "lamalfa",
        "GloVe as brittle as BERT (coPOS UUAS drop ratio)",
        "Table 1.1",
        "GloVe vs BERT layer -5",
        "1.00 (0.2444 / 0.2451)",
        "GloVe 6B 50d vs MiniLM hidden state 2",
        compare="equal",
        value=0.2444 / 0.2451,
        tolerance=0.2,
        measure=ratio(
            fragility("copos", "distance.uuas", model="glove"), fragility("copos", "distance.uuas")
        ),
        quotes=("0.2444", "0.2451"),
    ),
    on_causal_lm(LM_COPOS_UUAS, "copos"),
    on_causal_lm(LM_RANDOM_UUAS, "random"),
    Claim(
        "lm-glove-clean",
        "lamalfa",
        "GloVe competitive on clean data (UUAS ratio)",
        "§6.2, Fig. 10",
        "GloVe vs BERT, RoBERTa; MLP probes",
        "'only slightly worse' (read: ≥ 0.8)",
        "GloVe 6B 50d vs MiniLM hidden state 2, linear probes",
        compare="at_least",
        value=0.8,
        measure=glove_clean,
        quotes=("word embeddings only slightly worse than BERT and RoBERTa",),
    ),
    # A tale of a probe and a parser.
    TALE_UUAS_LAST,
    Claim(
        "tale-uuas-best",
        "tale",
        "the parser's UUAS lead, best layer",
        "§5, Fig. 2a",
        TALE_SET + " (final layer)",
        "+0.111",
        TALE_BRITTLE + ", hidden state 3 (dev loss)",
        value=0.111,
        measure=tale("3", "uuas"),
        quotes=("by 11.1 UUAS points",),
    ),
    TALE_DSPR_LAST,
    Claim(
        "tale-dspr-best",
        "tale",
        "the structural probe wins DSpr, best layer",
        "§5, Fig. 2b",
        TALE_SET + " (final layer)",
        "< 0",
        TALE_BRITTLE + ", hidden state 3 (dev loss)",
        compare="sign",
        value=-1,
        measure=tale("3", "dspr"),
        quotes=("the structural probe outperforms the parser on all languages",),
    ),
    TALE_PRIM_LAST,
    Claim(
        "tale-prim-best",
        "tale",
        "after Prim + Floyd-Warshall the DSpr gap ≈ 0, best layer",
        "§5, Fig. 3",
        TALE_SET + "; mean of 9 languages",
        "+0.0006",
        TALE_BRITTLE + ", hidden state 3 (dev loss)",
        value=0.0006,
        tolerance=0.01,
        measure=tale("3", "dspr_prim"),
        quotes=("just 0.0006",),
    ),
    tale_on_causal_lm(TALE_UUAS_LAST, "uuas"),
    tale_on_causal_lm(TALE_DSPR_LAST, "dspr"),
    tale_on_causal_lm(TALE_PRIM_LAST, "dspr_prim"),
    Claim(
        "tale-languages",
        "tale",
        "the parser wins UUAS in 7 of 9 languages",
        "§5, Fig. 2a",
        TALE_SET + "; 9 languages",
        "7 of 9",
        "English only",
        untestable="the offline treebanks are English only",
        quotes=("seven of nine",),
    ),
    # Hall Maudslay & Cotterell, Jabberwocky.
    Claim(
        "jab-perceptron",
        "jabberwocky",
        "perceptron UUAS drop on Jabberwocky",
        "§5.2",
        JAB_SET + "; mean of the 3",
        "0.154",
        JAB_BRITTLE,
        value=0.154,
        measure=jab_drop("minilm{perceptron}-perceptron", "uuas"),
        quotes=("average of 15.4 UUAS points",),
    ),
    Claim(
        "jab-bert-shrink",
        "jabberwocky",
        "structural probe: DSpr lead over Majority shrinks",
        "§5.2",
        "BERT large",
        "53% (0.078 → 0.037)",
        JAB_BRITTLE,
        value=0.53,
        tolerance=0.05,
        measure=jab_shrink,
        quotes=("from 0.078 to 0.037", "53%"),
    ),
    Claim(
        "jab-roberta-shrink",
        "jabberwocky",
        "structural probe: DSpr lead over Majority shrinks",
        "§5.2",
        "RoBERTa large",
        "77% (0.074 → 0.017)",
        JAB_BRITTLE,
        value=0.77,
        tolerance=0.05,
        measure=jab_shrink,
        quotes=("from 0.074 to 0.017", "77%"),
    ),
    Claim(
        "jab-gpt2",
        "jabberwocky",
        "structural probe falls behind Path on Jabberwocky (DSpr)",
        "§5.2",
        "GPT-2 large",
        "−0.004 (0.580 vs 0.584)",
        SMOLLM2_PROBES + JAB_WORDS + "; GPT-2 large cannot be had here, SmolLM2 is the causal LM",
        compare="sign",
        value=-1,
        tolerance=0.01,
        measure=jab_structural_vs_path(JAB_SMOLLM2.format(task="distance")),
        quotes=("0.580 compared to 0.584",),
    ),
    Claim(
        "jab-above",
        "jabberwocky",
        "perceptron probes still beat Path and Majority (UUAS)",
        "§5.2",
        JAB_SET,
        "> 0 (all three)",
        JAB_BRITTLE + "; Jabberwocky UUAS over the better baseline",
        compare="sign",
        value=1,
        tolerance=0.01,
        measure=jab_over_baselines("minilm{perceptron}-perceptron"),
        quotes=("they all still outperform the baselines under UUAS",),
    ),
    Claim(
        "jab-perceptron-causal",
        "jabberwocky",
        "perceptron UUAS drop on Jabberwocky, a causal LM",
        "§5.2",
        JAB_SET + "; mean of the 3",
        "0.154",
        SMOLLM2_PROBES + JAB_WORDS,
        value=0.154,
        measure=jab_drop(JAB_SMOLLM2.format(task="perceptron"), "uuas"),
        quotes=("average of 15.4 UUAS points",),
    ),
    Claim(
        "jab-above-causal",
        "jabberwocky",
        "perceptron probes still beat Path and Majority (UUAS), a causal LM",
        "§5.2",
        JAB_SET,
        "> 0 (all three)",
        SMOLLM2_PROBES + JAB_WORDS + "; Jabberwocky UUAS over the better baseline",
        compare="sign",
        value=1,
        tolerance=0.01,
        measure=jab_over_baselines(JAB_SMOLLM2.format(task="perceptron")),
        quotes=("they all still outperform the baselines under UUAS",),
    ),
    Claim(
        "jab-fastpos",
        "jabberwocky",
        "BERT's perceptron lead over Fast+Pos on Jabberwocky",
        "§5.2",
        "BERT large vs FastText + BERT positions",
        "+0.204",
        JAB_BRITTLE + " vs GloVe 6B 50d + MiniLM's position embeddings (glove+pos)",
        value=0.204,
        tolerance=0.01,
        measure=jab_over_control("glove+pos-perceptron", "glove+pos"),
        quotes=("the lead is 20.4 points over the Fast+Pos baseline",),
    ),
    # Clouatre et al.
    *(
        Claim(
            f"cl-listing-{k}",
            "clouatre",
            f"IDC, DND of Listing 1's {name}",
            "App. C, Listing 1",
            '"This is a test", 14 characters',
            f"{v[0]:.2f}, {v[1]:.2f}",
            "brittle.scorers.order on the same permutation",
            value=v,
            tolerance=0.01,
            quotes=(f"IDC      = {v[0]:.2f}", f"DND      = {v[1]:.2f}"),
            measure=listing(name),
        )
        for k, (name, (_, v)) in enumerate(LISTING_1.items(), start=1)
    ),
    Claim(
        "cl-word-dnd",
        "clouatre",
        "word-level perturbations keep DND in about [0, 0.2]",
        "§6.2, Fig. 6a",
        "GLUE texts; 16 word-level perturbations",
        "0–0.2",
        CL_BRITTLE + "; the paper's word-level grid",
        compare="range",
        value=(0.0, 0.2),
        measure=word_dnd_max,
        quotes=("roughly in the range",),
    ),
    Claim(
        "cl-char-dnd",
        "clouatre",
        "character-level perturbations span the DND range",
        "§6.2, Fig. 6b",
        "GLUE texts; App. A grid",
        "0–1 (read: below 0.2 and above 0.8)",
        CL_BRITTLE + "; the paper's character grid",
        compare="span",
        value=(0.2, 0.8),
        measure=char_dnd_span,
        quotes=("impact the full range of possible DND values",),
    ),
    Claim(
        "cl-phrase-idc",
        "clouatre",
        "phrase shuffle moves text as far as a full shuffle (IDC ratio)",
        "§4",
        "word level, rho 0.66",
        "'on average the same'",
        CL_BRITTLE + "; random cuts, rho 0.66",
        compare="equal",
        value=1.0,
        tolerance=0.2,
        measure=phrase_vs_shuffle("idc_chars"),
        quotes=("the same impact as the full shuffling",),
    ),
    Claim(
        "cl-phrase-dnd",
        "clouatre",
        "…and breaks less local order (DND shuffle − phrase)",
        "§4",
        "word level, rho 0.66",
        "> 0",
        CL_BRITTLE + "; random cuts, rho 0.66",
        compare="sign",
        value=1,
        tolerance=0.01,
        measure=phrase_vs_shuffle("dnd_chars"),
        quotes=("a lesser impact on the *local* structure",),
    ),
    Claim(
        "cl-damage",
        "clouatre",
        "DND explains the damage better than IDC",
        "§6.3, Figs. 7, 13",
        "GLUE score of fine-tuned RoBERTa, BART, LSTM, ConvNet",
        "> 0 (values only in figures)",
        "MiniLM layer -5 distance probe, UUAS damage, 300 EWT test sentences; Spearman DND − IDC",
        compare="sign",
        value=1,
        capped="the paper's correlations are only drawn, and brittle scores a probe, not GLUE",
        measure=dnd_lead,
        quotes=("IDC is only weakly correlated with performance decay",),
    ),
    Claim(
        "cl-glue",
        "clouatre",
        "GLUE scores fall with DND",
        "§6.3, Fig. 8",
        "RoBERTa-base, BART-base and others fine-tuned on perturbed GLUE",
        "figures only",
        "–",
        untestable="GLUE and fine-tuned models are not available offline",
        quotes=("the proposed DND metric has a strong correlation",),
    ),
    # Chaves & Richter.
    Claim(
        "cr-exp1",
        "chaves",
        "experiment 1: every condition right and significant",
        "§2.1, Table 3",
        CR_SET + "; 5,040 items",
        "all (p < 6.87e-7)",
        CR_BRITTLE + "; 2,800 items",
        compare="at_least",
        value=1.0,
        measure=agreement_share("1"),
        quotes=("6.87e-7",),
    ),
    Claim(
        "cr-exp2",
        "chaves",
        "experiment 2: every condition right and significant",
        "§2.2",
        CR_SET + "; 960 items",
        "all (p < 2.57e-15)",
        CR_BRITTLE + "; 480 items",
        compare="at_least",
        value=1.0,
        measure=agreement_share("2"),
        quotes=("2.57e-15",),
    ),
    Claim(
        "cr-table4",
        "chaves",
        "E4, complex matrix subject, was/were: accuracy",
        "Table 4",
        "GPT-2 medium",
        "1.00 (read: ≥ 0.95)",
        CR_BRITTLE,
        compare="at_least",
        value=0.95,
        measure=agreement_table4,
        quotes=("be 80% 100%",),
    ),
    Claim(
        "cr-bert",
        "chaves",
        "BERT misses singular targets at E2–E4",
        "§2.1, Table 1",
        "BERT large and base (masked)",
        "p = 0.1–0.5",
        "–",
        untestable="no masked LM with its MLM head is available offline",
        quotes=("= 0.1", "= 0.5"),
    ),
)

#: La Malfa et al.'s claims again with their own probe and data shape (the sentence cut or
#: padded to 20 words), after the rest of their table.
CLAIMS += tuple(
    with_sentence_probe(claim, method, column)
    for claim in CLAIMS
    for key, method, column in (
        ("lm-copos-uuas", "copos", "distance.uuas"),
        ("lm-copos-root", "copos", "root.root_acc"),
        ("lm-copos-depth", "copos", "tree-depth.tree_depth_acc"),
        ("lm-random-uuas", "random", "distance.uuas"),
        ("lm-random-root", "random", "root.root_acc"),
    )
    if claim.id == key
)

#: The papers' text (shared/papers), one file per section.
SOURCES = {
    "lamalfa": "la-malfa-emergent-linguistic-structures-are-fragile.txt",
    "tale": "hall-maudslay-tale-of-a-probe-and-a-parser.txt",
    "jabberwocky": "hall-maudslay-cotterell-jabberwocky-probing.txt",
    "clouatre": "clouatre-word-order-insensitivity.txt",
    "chaves": "chaves-richter-bert-distracted-agreement.txt",
}

#: Section titles, in page order.
PAPERS = {
    "lamalfa": "La Malfa et al., Emergent linguistic structures in neural networks are fragile",
    "tale": "Hall Maudslay et al., A tale of a probe and a parser",
    "jabberwocky": "Hall Maudslay & Cotterell, Do syntactic probes probe syntax?",
    "clouatre": "Clouatre et al., Demystifying neural language models' insensitivity to word order",
    "chaves": "Chaves & Richter, Look at that! BERT can be easily distracted",
}


# ------------------------------------------------------------------ verdicts
def verdict(claim: Claim, measured: Measured | None) -> tuple[str, str]:
    """The verdict and why, from the numbers alone (see the module doc)."""
    if claim.untestable:
        return NOT_TESTABLE, claim.untestable
    if measured is None:
        return NOT_TESTABLE, "brittle's measurement is missing"
    b, lo, hi = measured["value"], measured["low"], measured["high"]
    p = claim.value
    if claim.compare == "value" and isinstance(p, tuple):
        gaps = [abs(x - y) for x, y in zip(b, p, strict=True)]
        if max(gaps) <= claim.tolerance:
            return REPRODUCED, f"every number within ±{claim.tolerance:g} (the paper's rounding)"
        return NOT_REPRODUCED, f"off by up to {max(gaps):.3f}"
    if claim.compare == "range":
        low, high = p
        if low <= b <= high:
            return REPRODUCED, f"{b:.3f} lies in {low:g}–{high:g}"
        return NOT_REPRODUCED, f"{b:.3f} lies outside {low:g}–{high:g}"
    if claim.compare == "span":
        low, high = p
        if b[0] < low and b[1] > high:
            return REPRODUCED, f"from below {low:g} to above {high:g}"
        return NOT_REPRODUCED, f"does not reach below {low:g} and above {high:g}"
    if claim.compare == "at_least":
        if b >= p:
            return REPRODUCED, f"{b:.3g} ≥ {p:g}"
        return NOT_REPRODUCED, f"{b:.3g} < {p:g}"
    if claim.compare == "equal":
        if measured.get("unfounded"):
            parts = measured["unfounded"]
            which = (
                f"{parts[0]} is no larger than its null"
                if len(parts) == 1
                else f"{' and '.join(parts)} are no larger than their nulls"
            )
            return NOT_REPRODUCED, (
                f"{b / p:.2f}× the paper's, but {which} (the largest gain among the same "
                "draws): the ratio compares chance"
            )
        if abs(b / p - 1) <= claim.tolerance:
            return REPRODUCED, f"within ±{claim.tolerance:.0%} of the paper's"
        return NOT_REPRODUCED, f"{b / p:.2f}× the paper's, outside ±{claim.tolerance:.0%}"
    established = (lo > 0 or hi < 0) if lo is not None else abs(b) > claim.tolerance
    interval = "its 95% CI excludes 0" if lo is not None else f"|value| > {claim.tolerance:g}"
    if "excess" in measured:  # a worst of b: read against its null, not against 0
        e_lo, e_hi = measured["excess"]
        established = e_lo > 0 or e_hi < 0
        interval = (
            "its excess over the null has a 95% CI that excludes 0"
            if established
            else "its excess over the null has a 95% CI that includes 0"
        )
    sign = p if claim.compare == "sign" else math.copysign(1, p)
    same = established and math.copysign(1, b) == sign
    if claim.compare == "sign":
        if same and claim.capped:
            return DIRECTION, f"the sign agrees ({interval}); {claim.capped}"
        if same:
            return REPRODUCED, f"the sign agrees and {interval}"
        return NOT_REPRODUCED, "the sign is the other one" if established else "no sign established"
    # a worst of b no larger than its null shows no effect, whatever its size
    if "excess" in measured and not established:
        return NOT_REPRODUCED, f"no sign established: {interval}"
    # value: do the intervals meet?
    if lo is not None and lo <= p <= hi:
        return REPRODUCED, "the paper's number lies in brittle's 95% CI"
    if claim.spread and abs(b - p) <= claim.spread:
        return REPRODUCED, "brittle's number lies within the paper's ± over corpora"
    if lo is None and abs(b - p) <= claim.tolerance:
        return REPRODUCED, f"within ±{claim.tolerance:g} of the paper's"
    if same:
        size = f"{b / p:.2f}× the paper's" if p else "the paper's is about 0"
        return DIRECTION, f"same sign ({interval}), but {size}"
    return NOT_REPRODUCED, "the sign is the other one" if established else "no sign established"


# ------------------------------------------------------------------ tables
def collect(tables: Path) -> dict[str, Measured | None]:
    """brittle's number for every claim, from the step tables in ``tables``."""
    loaded: Tables = {}
    for name in ("fragility", "probe_parser", "jabberwocky", "damage", "word_order", "agreement"):
        path = tables / f"{name}.json"
        if path.exists():
            loaded[name] = json.loads(path.read_text())
    out: dict[str, Measured | None] = {}
    for claim in CLAIMS:
        try:
            out[claim.id] = None if claim.measure is None else claim.measure(loaded)
        except KeyError:
            out[claim.id] = None
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(paper: str, measured: dict[str, Measured | None]) -> str:
    """The comparison table of one paper."""
    lines = [HEADER]
    for n, claim in enumerate((c for c in CLAIMS if c.paper == paper), start=1):
        m = measured.get(claim.id)
        kind, why = verdict(claim, m)
        brittle = "–" if m is None else m["text"]
        cells = [
            str(n), claim.claim, claim.where, claim.setting, claim.shown, brittle,
            claim.brittle, f"**{kind}**: {why}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def render_summary(measured: dict[str, Measured | None]) -> str:
    """Verdict counts per paper."""
    lines = [
        "| paper | claims | " + " | ".join(VERDICTS) + " |",
        "| --- | ---: |" + " ---: |" * len(VERDICTS),
    ]
    for key, title in PAPERS.items():
        kinds = [verdict(c, measured.get(c.id))[0] for c in CLAIMS if c.paper == key]
        counts = " | ".join(str(kinds.count(v)) for v in VERDICTS)
        lines.append(f"| {title} | {len(kinds)} | {counts} |")
    return "\n".join(lines) + "\n"


def blocks(measured: dict[str, Measured | None]) -> dict[str, str]:
    """Every generated block of the page, by name."""
    out = {"summary": render_summary(measured)}
    out.update({key: render(key, measured) for key in PAPERS})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    measured = kept_figures(args, lambda: collect(args.work / "tables"))
    publish(blocks(measured), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
