"""Tiny random language models for the agreement tests, saved and loaded by directory.

The vocabularies come from the agreement lexicon; some verb forms are left out of the
BERT vocabulary and the BPE merges are few, so several forms split into pieces and the
multi-piece paths (sum over pieces, successive masking) are exercised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from brittle.engine.agreement.stimuli import generate

#: Verb forms kept out of the BERT vocabulary (they become two pieces: seem + ##s, ...).
SPLIT_IN_BERT = ("seems", "looks", "sounds")


def stimulus_words() -> list[str]:
    words: set[str] = set()
    for s in generate(items=3, seed=0):
        words.update(w.lower() for w in s.forms)
    for pair in "is are was were seems seem gets get becomes become looks look sounds sound":
        words.update(pair.split())
    return sorted(words)


def make_gpt2(path: Path) -> Path:
    import transformers
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    fast_class: Any = getattr(transformers, "GPT2TokenizerFast", transformers.GPT2Tokenizer)
    corpus = [s.text for s in generate(items=2, seed=5)]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        corpus,
        vocab_size=300,
        min_frequency=2,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok = fast_class(
        tokenizer_object=bpe._tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_bert(path: Path) -> Path:
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    words = [w for w in stimulus_words() if w not in SPLIT_IN_BERT]
    vocab_list = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "##s", *words]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(vocab_list))}
    try:
        tok = BertTokenizer(vocab=vocab)
    except TypeError:  # transformers 4: vocabulary from a file
        vocab_file = path / "vocab.txt"
        vocab_file.write_text("\n".join(vocab) + "\n")
        tok = BertTokenizer(vocab_file=str(vocab_file))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertForMaskedLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path
