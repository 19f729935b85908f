"""La Malfa et al.'s sentence-level probe: one network over the sentence cut or padded
to a fixed number of words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from probe_synthetic import synthetic

from brittle.engine.core.errors import ConfigError
from brittle.engine.probes.probe_data import ProbeData
from brittle.engine.probes.probe_training import TrainConfig, evaluate_data, train_probe
from brittle.scorers.probe import Probe
from brittle.scorers.probe_nets import SentenceNet, make_net
from brittle.scorers.probe_tasks import ProbeSpec, task_for
from brittle.scorers.representations import FlatVectors, RepresentationKey

from support import FIXTURES

KEY = RepresentationKey("random", "synthetic", 0, "-")


def net(words: int = 5, dim: int = 3, out: int = 2) -> SentenceNet:
    torch.manual_seed(0)
    return SentenceNet(dim, out, words=words, hidden=8, bias=True)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), extra=st.integers(0, 4), seed=st.integers(0, 1000))
def test_outputs_depend_only_on_the_sentence_not_its_padding(n: int, extra: int, seed: int) -> None:
    """A sentence's outputs are the same alone and zero-padded inside a wider batch."""
    m = net()
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal((1, n, 3)).astype("f4"))
    wide = torch.cat([x, torch.zeros((1, extra, 3))], dim=1)
    with torch.no_grad():
        alone, padded = m(x), m(wide)
    assert alone.shape == (1, n, 2)
    assert padded.shape == (1, n + extra, 2)
    torch.testing.assert_close(padded[:, :n], alone)


def test_words_past_the_width_are_not_seen_and_output_zeros() -> None:
    m = net(words=4)
    x = torch.randn(2, 7, 3)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 3, 3)
    with torch.no_grad():
        y, y2 = m(x), m(changed)
    torch.testing.assert_close(y, y2)
    assert torch.all(y[:, 4:] == 0)
    torch.testing.assert_close(y[:, :4], m(x[:, :4]).detach())


def test_every_output_sees_the_whole_sentence() -> None:
    """Unlike the word-level networks, changing one word moves the others' outputs."""
    x = torch.randn(1, 5, 3)
    changed = x.clone()
    changed[0, 4] += 1.0
    sentence = net()
    torch.manual_seed(0)
    word = make_net("mlp", 3, 2, hidden=8, bias=True, words=5)
    with torch.no_grad():
        assert not torch.allclose(sentence(x)[0, 0], sentence(changed)[0, 0])
        torch.testing.assert_close(word(x)[0, :4], word(changed)[0, :4])


def test_unknown_architecture_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="linear, mlp, sentence"):
        ProbeSpec(task="pos", dim=4, arch="cnn")
    with pytest.raises(ConfigError, match="words"):
        ProbeSpec(task="pos", dim=4, arch="sentence", words=0)


def test_spec_keeps_its_width_through_json_and_old_specs_are_unchanged() -> None:
    spec = ProbeSpec(task="root", dim=4, arch="sentence", words=12, hidden=32)
    assert spec.to_dict()["words"] == 12
    assert ProbeSpec.from_dict(spec.to_dict()) == spec
    linear = ProbeSpec(task="root", dim=4)
    assert "words" not in linear.to_dict()
    assert ProbeSpec.from_dict(linear.to_dict()) == linear


@pytest.fixture(scope="module")
def data() -> tuple[ProbeData, ProbeData]:
    torch.set_num_threads(1)
    return synthetic(240, seed=1), synthetic(80, seed=2)


@pytest.mark.parametrize(
    ("task", "metric", "gain"),
    [("pos", "pos_acc", 0.3), ("root", "root_acc", 0.3), ("distance", "dspr", 0.05)],
)
def test_sentence_probe_learns(
    data: tuple[ProbeData, ProbeData], task: str, metric: str, gain: float
) -> None:
    """Trained, it beats the same network untrained by ``gain`` on held-out sentences
    (it learns less from 240 sentences than a word-level probe: it has 12 times the
    inputs and shares nothing between positions)."""
    spec = ProbeSpec(task=task, dim=data[0].dim, arch="sentence", words=12, hidden=128, rank=16)
    result = train_probe(spec, KEY, *data, config=TrainConfig(epochs=30, lr=3e-3, seed=0))
    torch.manual_seed(0)
    untrained = evaluate_data(Probe(result.probe.spec, KEY), data[1])[metric]
    assert result.dev_metrics[metric] >= untrained + gain, (untrained, result.dev_metrics)
    assert result.probe.spec.words == 12
    # a sentence predicted alone gives what it gives in a batch
    together = result.probe.predict(data[1])
    for i in range(5):
        alone = result.probe.predict(FlatVectors.stack([np.asarray(data[1].sentence(i))]))[0]
        np.testing.assert_allclose(together[i], alone, rtol=1e-5, atol=1e-5)
    assert list(result.dev_metrics) == list(task_for(task).metric_names)


def test_train_probe_refuses_a_width_for_a_word_level_network(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from brittle.cli.main import main

    treebank = str(FIXTURES / "mwt_empty.conllu")
    args = ["train-probe", treebank, "--dev", treebank, "--out", str(tmp_path / "p")]
    for extra, message in (
        (["--words", "12"], "--words sets the sentence network's width; --arch is linear"),
        (["--arch", "sentence", "--words", "0"], "--words must be at least 1 (got 0)"),
    ):
        result = CliRunner().invoke(main, [*args, *extra])
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert not (tmp_path / "p").exists()


def test_a_description_larger_than_its_weights_is_refused_before_allocating(
    data: tuple[ProbeData, ProbeData], tmp_path: Path
) -> None:
    """A probe.json from a user may declare sizes whose product no memory holds (a
    sentence network of 60,000 words): loading refuses it in one line, and the probe as
    saved still loads."""
    import json

    spec = ProbeSpec(task="root", dim=data[0].dim, arch="sentence", words=12, hidden=16)
    result = train_probe(spec, KEY, *data, config=TrainConfig(epochs=1, seed=0))
    out = tmp_path / "probe"
    result.probe.save(out)
    assert Probe.load(out).spec.words == 12
    meta = json.loads((out / "probe.json").read_text())
    meta["spec"]["words"] = 60_000
    meta["spec"]["hidden"] = 60_000
    (out / "probe.json").write_text(json.dumps(meta))
    with pytest.raises(
        ConfigError,
        match=(
            r"weights.pt: cannot load the probe weights \(probe.json declares a sentence "
            r"network of 183,600,240,000 weights, more than the file's"
        ),
    ):
        Probe.load(out)
