"""report.html in a real browser: Debian's headless Chromium, driven through the DevTools
protocol (tests/browser.py). Skipped, with the reason, only where no Chromium is
installed (``make setup`` installs it with apt-get); failed there instead under
``BRITTLE_REQUIRE_ALL=1``."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import Browser, find_chromium
from click.testing import CliRunner
from needs import require
from report_run import PERTURB_SENTENCES, SENTENCES, TREEBANK, compare_methods_page
from report_run import perturb_page as run_perturb

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.reports.html_report import REPORT_HTML, write_html_report
from brittle.engine.reports.report import Summary
from brittle.engine.reports.results import RESULTS, ResultRow, read_rows

CHROMIUM = find_chromium()
pytestmark = pytest.mark.needs("browser")

ROWS = "#sentence-table tbody tr"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as b:
        yield b


@pytest.fixture
def page(browser: Browser, probed_attack: Path) -> Browser:
    browser.resize(1400, 1000)
    browser.open(probed_attack / REPORT_HTML)
    return browser


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / RESULTS).read_text().splitlines()]


def _arcs_by_tree(b: Browser) -> dict[str, int]:
    return b.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#sentence-view svg[data-tree]'))"
        ".map(s => [s.dataset.tree, s.querySelectorAll('path.arc').length]))"
    )


def test_table_has_one_row_per_sentence(page: Browser, probed_attack: Path):
    rows = _rows(probed_attack)
    assert page.evaluate(f"document.querySelectorAll('{ROWS}').length") == len(rows) == SENTENCES
    ids = page.evaluate(f"Array.from(document.querySelectorAll('{ROWS} td:nth-child(2)'))"
                        ".map(td => td.textContent)")  # fmt: skip
    assert ids == [r["sent_id"] for r in rows]
    assert page.evaluate("document.getElementById('row-count').textContent") == (
        f"{SENTENCES} of {SENTENCES} sentences"
    )
    assert page.errors == []


def test_opening_a_sentence_draws_one_arc_per_word_of_every_tree(
    page: Browser, probed_attack: Path
):
    sentences = read_conllu(TREEBANK)[:SENTENCES]
    for k, (row, sentence) in enumerate(zip(_rows(probed_attack), sentences, strict=True)):
        page.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
        page.wait_until("!document.getElementById('sentence-view').hidden")
        arcs = _arcs_by_tree(page)
        expected = {"gold": len(sentence)}
        for version, prediction in row["predictions"]["distance"].items():
            expected[f"distance:{version}"] = sum(h >= 0 for h in prediction["heads"])
        assert arcs == expected
        assert set(arcs) == {"gold", "distance:clean", "distance:perturbed"} or not row["success"]
        # every changed word is marked, with the other form on hover
        marks = page.evaluate(
            "Array.from(document.querySelectorAll('#sentence-view .texts p:nth-child(2) mark'))"
            ".map(m => [m.textContent, m.title])"
        )
        changed = [(b, f"was: {a}") for a, b in zip(row["words"], row["perturbed"], strict=True)
                   if a != b]  # fmt: skip
        assert [tuple(m) for m in marks] == changed
        assert page.evaluate("location.hash") == f"#sentence-{row['index']}"
        page.evaluate("document.getElementById('sv-close').click()")
        assert page.evaluate("document.getElementById('sentence-view').hidden")
    assert page.errors == []


def test_the_sentence_view_shows_depths_and_tags(page: Browser, probed_attack: Path):
    rows = _rows(probed_attack)
    k = next(i for i, r in enumerate(rows) if r["success"])
    page.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
    n = len(rows[k]["words"])
    # one dot per word and version on the depth chart
    assert page.evaluate("document.querySelectorAll('svg[data-depths] circle').length") == 2 * n
    clean, perturbed = (rows[k]["predictions"]["pos"][v]["tags"] for v in ("clean", "perturbed"))
    flips = sum(a != b for a, b in zip(clean, perturbed, strict=True))
    shown = page.evaluate("document.querySelectorAll('table[data-flips] tbody tr').length")
    assert shown == flips
    # lost edges: gold arcs the clean tree had and the perturbed one lost
    lost = page.evaluate("document.querySelectorAll('svg[data-tree=gold] path.arc.lost').length")
    text = page.evaluate("document.querySelector('#sentence-view .legend').textContent")
    assert f"({lost} lost," in text


def test_sorting_by_damage_orders_the_rows(page: Browser, probed_attack: Path):
    damage = "document.querySelector('th[data-key=d] button').click()"
    read = (
        f"Array.from(document.querySelectorAll('{ROWS} td:nth-child(4)')).map(t => +t.textContent)"
    )
    page.evaluate(damage)
    values = page.evaluate(read)
    assert values == sorted(values, reverse=True) and len(values) == SENTENCES
    assert page.evaluate("document.querySelector('th[data-key=d]').getAttribute('aria-sort')") == (
        "descending"
    )
    expected = sorted(_rows(probed_attack), key=lambda r: (-r["damage"], r["index"]))
    ids = page.evaluate(f"Array.from(document.querySelectorAll('{ROWS} td:nth-child(2)'))"
                        ".map(td => td.textContent)")  # fmt: skip
    assert ids == [r["sent_id"] for r in expected]
    page.evaluate(damage)
    assert page.evaluate(read) == sorted(values)


def test_filtering_by_outcome_and_text(page: Browser, probed_attack: Path):
    rows = _rows(probed_attack)
    word = rows[2]["perturbed"][rows[2]["positions"][0]] if rows[2]["positions"] else "the"
    page.evaluate(
        "(() => { const i = document.getElementById('filter-text');"
        f" i.value = {json.dumps(word.upper())}; i.dispatchEvent(new Event('input')); }})()"
    )
    expected = [r["sent_id"] for r in rows if word.lower() in
                " ".join([r["sent_id"], *r["words"], *r["perturbed"]]).lower()]  # fmt: skip
    page.wait_until(f"document.querySelectorAll('{ROWS}').length === {len(expected)}")
    page.evaluate(
        "(() => { const i = document.getElementById('filter-text');"
        " i.value = ''; i.dispatchEvent(new Event('input'));"
        " const s = document.getElementById('filter-success');"
        " s.value = 'failure'; s.dispatchEvent(new Event('change')); })()"
    )
    failed = sum(not r["success"] and r["evaluated"] > 0 for r in rows)
    page.wait_until(f"document.querySelectorAll('{ROWS}').length === {failed}")


def test_the_page_makes_no_request_outside_itself(page: Browser, probed_attack: Path):
    page.evaluate(f"document.querySelectorAll('{ROWS}')[0].click()")
    assert page.requests, "the browser recorded no request at all"
    outside = [u for u in page.requests if not u.startswith(("file://", "data:"))]
    assert outside == []
    assert page.errors == []


def test_a_screenshot_of_the_sentence_view_is_not_blank(
    page: Browser, probed_attack: Path, tmp_path: Path
):
    from PIL import Image

    page.evaluate(f"document.querySelectorAll('{ROWS}')[0].click()")
    height = page.evaluate("document.querySelector('#sentence-view .panel').scrollHeight")
    page.resize(1400, int(height) + 60)
    shot = page.screenshot(tmp_path / "sentence.png")
    with Image.open(shot) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int32)
    assert pixels.shape == (int(height) + 60, 1400, 3)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # text, arcs in several colours
    dark = float((pixels.sum(axis=2) < 300).mean())
    assert dark > 0.002, f"the sentence view has almost no text or lines ({dark:.4%} dark)"
    for name, colour in {"right edge": (26, 127, 55), "wrong edge": (207, 34, 46)}.items():
        assert _has_colour(shot, colour), f"no {name} drawn"


def _has_colour(path: Path, colour: tuple[int, int, int], tolerance: int = 12) -> bool:
    from PIL import Image

    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int32)
    return bool((np.abs(pixels - np.array(colour)).max(axis=2) <= tolerance).any())


def test_an_older_run_shows_the_gold_tree_only(browser: Browser, probed_attack: Path, tmp_path):
    out = tmp_path / "old"
    shutil.copytree(probed_attack, out)
    lines = []
    for line in (out / RESULTS).read_text().splitlines():
        data = json.loads(line)
        del data["predictions"]
        lines.append(ResultRow.from_json(data).to_line().decode())
    (out / RESULTS).write_text("".join(lines))
    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    browser.resize(1400, 1000)
    browser.open(out / REPORT_HTML)
    browser.evaluate(f"document.querySelectorAll('{ROWS}')[0].click()")
    assert _arcs_by_tree(browser) == {"gold": len(read_conllu(TREEBANK)[0])}
    text = browser.evaluate("document.getElementById('sv-body').textContent")
    assert "no probe predictions" in text
    assert browser.errors == []


def test_ten_thousand_sentences_stay_responsive(
    browser: Browser, probed_attack: Path, tmp_path: Path
):
    """The page of a 10,000-sentence run: built from the real rows repeated, it loads,
    sorts and opens a sentence within seconds (numbers printed for the docs)."""
    rows = list(read_rows(probed_attack / RESULTS))
    sentences = {s.sent_id: s for s in read_conllu(TREEBANK)[:SENTENCES]}
    summary: Summary = json.loads((probed_attack / "summary.json").read_text())
    n = 10_000

    def pairs():
        for i in range(n):
            row = rows[i % len(rows)]
            yield (
                dataclasses.replace(row, index=i, sent_id=f"{row.sent_id}-{i}"),
                sentences[row.sent_id],
            )

    page = write_html_report(probed_attack, summary, pairs(), path=tmp_path / REPORT_HTML)
    size = page.stat().st_size
    browser.resize(1400, 1000)
    loaded = browser.open(page)
    assert browser.evaluate(f"document.querySelectorAll('{ROWS}').length") == n
    start = time.monotonic()
    browser.evaluate("document.querySelector('th[data-key=d] button').click()")
    browser.evaluate(f"document.querySelectorAll('{ROWS}').length")
    sorted_in = time.monotonic() - start
    start = time.monotonic()
    browser.evaluate(f"document.querySelectorAll('{ROWS}')[{n // 2}].click()")
    assert _arcs_by_tree(browser)["gold"] > 0
    opened_in = time.monotonic() - start
    print(
        f"\n10,000 sentences: page {size / 1e6:.1f} MB, loaded in {loaded:.2f} s, "
        f"sorted in {sorted_in:.2f} s, sentence opened in {opened_in:.2f} s"
    )
    assert loaded < 20 and sorted_in < 5 and opened_in < 2
    assert browser.errors == []


def test_the_compare_methods_page_renders_offline(browser: Browser, tmp_path: Path):
    page = compare_methods_page(tmp_path)
    browser.resize(1200, 900)
    browser.open(page, ready="document.readyState === 'complete'")
    rows = len(json.loads((tmp_path / "compare-methods.json").read_text())["rows"])
    assert browser.evaluate("document.querySelectorAll('main table tbody tr').length") == rows
    assert browser.evaluate("document.querySelector('figure img').naturalWidth") > 100
    assert [u for u in browser.requests if not u.startswith(("file://", "data:"))] == []
    assert browser.errors == []


# ---------------------------------------------------------------- perturb's page
def _differences(original: str, perturbed: str) -> tuple[int, int]:
    """Edges of two parses of the same words (``HEAD:DEPREL`` lines) whose head differs,
    and whose head is the same but the relation not."""
    pairs = [(a.partition(":"), b.partition(":")) for a, b in
             zip(original.split(), perturbed.split(), strict=True)]  # fmt: skip
    heads = sum(a[0] != b[0] for a, b in pairs)
    return heads, sum(a[0] == b[0] and a[2] != b[2] for a, b in pairs)


def test_the_perturb_page_draws_gold_and_both_parses(
    browser: Browser, perturb_page: Path, tmp_path: Path
):
    from PIL import Image

    records = json.loads(perturb_page.with_name("perturb.json").read_text())["sentences"]
    sentences = read_conllu(TREEBANK)[:PERTURB_SENTENCES]
    browser.resize(1400, 1000)
    browser.open(perturb_page)
    assert browser.evaluate(f"document.querySelectorAll('{ROWS}').length") == PERTURB_SENTENCES
    ids = browser.evaluate(f"Array.from(document.querySelectorAll('{ROWS} td:nth-child(2)'))"
                           ".map(td => td.textContent)")  # fmt: skip
    assert ids == [r["sent_id"] for r in records]
    three = marked = 0
    for k, (record, sentence) in enumerate(zip(records, sentences, strict=True)):
        browser.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
        browser.wait_until("!document.getElementById('sentence-view').hidden")
        n = len(sentence)
        expected = {"gold": n}
        if "parse_original" in record:
            expected["parse:original"] = n
        if "parse_perturbed" in record:
            expected["parse:perturbed"] = n
        assert _arcs_by_tree(browser) == expected
        three += len(expected) == 3
        if "parse_perturbed" in record:
            heads, relabels = _differences(record["parse_original"], record["parse_perturbed"])
            for tree in ("parse:original", "parse:perturbed"):
                shown = browser.evaluate(
                    f"[document.querySelectorAll('svg[data-tree=\"{tree}\"] path.arc.diff').length,"
                    f" document.querySelectorAll('svg[data-tree=\"{tree}\"] path.arc.relabel')"
                    ".length]"
                )
                assert shown == [heads, relabels]
            marked += heads + relabels
        marks = browser.evaluate(
            "Array.from(document.querySelectorAll('#sentence-view .texts p:nth-child(2) mark'))"
            ".map(m => [m.textContent, m.title])"
        )
        output = record["perturbation"] or ""
        assert len(marks) == (record["hamming"] or 0), output
        browser.evaluate("document.getElementById('sv-close').click()")
    assert three >= 3 and marked >= 1  # this run's parses differ somewhere
    # the sentence with differing edges, captured: text, arcs in grey and orange
    k = next(
        i for i, r in enumerate(records)
        if "parse_perturbed" in r and r["parse_original"] != r["parse_perturbed"]
    )  # fmt: skip
    browser.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
    height = browser.evaluate("document.querySelector('#sentence-view .panel').scrollHeight")
    browser.resize(1400, int(height) + 60)
    shot = browser.screenshot(tmp_path / "perturb-sentence.png")
    with Image.open(shot) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int32)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50
    assert float((pixels.sum(axis=2) < 300).mean()) > 0.002
    assert _has_colour(shot, (217, 119, 6)), "no differing edge drawn"
    assert [u for u in browser.requests if not u.startswith(("file://", "data:"))] == []
    assert browser.errors == []


def test_the_perturb_page_sorts_and_filters(browser: Browser, perturb_page: Path):
    records = json.loads(perturb_page.with_name("perturb.json").read_text())["sentences"]
    browser.resize(1400, 1000)
    browser.open(perturb_page)
    browser.evaluate("document.querySelector('th[data-key=sd] button').click()")
    ids = browser.evaluate(f"Array.from(document.querySelectorAll('{ROWS} td:nth-child(2)'))"
                           ".map(td => td.textContent)")  # fmt: skip
    order = sorted(
        range(len(records)),
        key=lambda k: (records[k]["syntax"] is None, -(records[k]["syntax"] or 0), k),
    )
    assert ids == [records[k]["sent_id"] for k in order]
    browser.evaluate(
        "(() => { const s = document.getElementById('filter-success');"
        " s.value = 'perturbed'; s.dispatchEvent(new Event('change')); })()"
    )
    perturbed = sum(r["status"] == "perturbed" for r in records)
    browser.wait_until(f"document.querySelectorAll('{ROWS}').length === {perturbed}")
    assert browser.errors == []


def test_a_gold_parser_perturb_page_says_there_is_no_reparse(browser: Browser, tmp_path: Path):
    page = run_perturb(tmp_path, parser="gold")
    browser.resize(1400, 1000)
    browser.open(page)
    browser.evaluate(f"document.querySelectorAll('{ROWS}')[0].click()")
    assert _arcs_by_tree(browser) == {"gold": len(read_conllu(TREEBANK)[0])}
    text = browser.evaluate("document.getElementById('sv-body').textContent")
    assert "there is no re-parse" in text
    assert browser.errors == []


def test_reordered_words_are_compared_with_themselves(browser: Browser, tmp_path: Path):
    """Under neighbour flips an edge of the original's parse is compared with the edge
    of the same word, wherever it moved ("train station" -> "station train": the same
    tree shape, but other heads)."""
    require("spacy-model")
    page = run_perturb(tmp_path, method="neighbour-flip")
    records = json.loads((tmp_path / "perturb.json").read_text())["sentences"]
    browser.resize(1400, 1000)
    browser.open(page)
    moved = 0
    for k, record in enumerate(records):
        if "parse_perturbed" not in record:
            continue
        to_orig = [int(x) - 1 for x in record["perturbation"].split("order=")[1].split(",")]
        to_pert = {o: j for j, o in enumerate(to_orig)}
        a = [x.partition(":") for x in record["parse_original"].split()]
        b = [x.partition(":") for x in record["parse_perturbed"].split()]
        heads = relabels = 0
        for c, (h, _, rel) in enumerate(a):
            hp, _, rel_p = b[to_pert[c]]
            same = (
                int(hp) == 0 if int(h) == 0 else int(hp) > 0 and to_orig[int(hp) - 1] == int(h) - 1
            )
            heads += not same
            relabels += same and rel != rel_p
        browser.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
        shown = browser.evaluate(
            "['parse:original', 'parse:perturbed'].map(t => ['diff', 'relabel'].map(c =>"
            ' document.querySelectorAll(`svg[data-tree="${t}"] path.arc.${c}`).length))'
        )
        assert shown == [[heads, relabels]] * 2, record["perturbation"]
        moved += heads
    assert moved > 0
    assert browser.errors == []


@pytest.mark.needs("spacy-model")
def test_a_parser_attack_draws_the_parsers_trees_and_the_edges_it_lost(
    browser: Browser, tmp_path: Path
):
    from click.testing import CliRunner

    from brittle.cli.main import main

    out = tmp_path / "parser"
    result = CliRunner().invoke(main, [
        "attack", str(TREEBANK), "--target", "parser:spacy", "--validity", "tree",
        "--budget", "2", "--query-budget", "20", "--limit", "4", "--no-grade", "--quiet",
        "--out", str(out),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    browser.open(out / REPORT_HTML)
    rows = _rows(out)
    k = next(i for i, r in enumerate(rows) if r["success"])
    browser.evaluate(f"document.querySelectorAll('{ROWS}')[{k}].click()")
    browser.wait_until("!document.getElementById('sentence-view').hidden")
    arcs = _arcs_by_tree(browser)
    parsed = rows[k]["predictions"]["parser"]
    assert arcs == {
        "gold": len(rows[k]["words"]),
        "parser:clean": len(parsed["clean"]["heads"]),
        "parser:perturbed": len(parsed["perturbed"]["heads"]),
    }
    legend = browser.evaluate("document.getElementById('sentence-view').textContent")
    assert "found by parser on the clean sentence, lost on the perturbed one" in legend
    assert browser.errors == []
