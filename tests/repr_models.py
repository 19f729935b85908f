"""Tiny randomly initialised transformers with real tokenizers, built offline for tests.

- :func:`tiny_bert`: a 2-layer BertModel with a WordPiece vocabulary (``##`` pieces);
- :func:`tiny_gpt2`: a 2-layer GPT2Model with a byte-level BPE tokenizer (``Ġ`` marks a
  leading space);
- :func:`tiny_sentencepiece`: a 2-layer BertModel with a SentencePiece-style tokenizer
  (Metaspace ``▁`` word markers, BPE pieces).

Each is saved to a directory and loaded back through ``from_pretrained`` like any model.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "the cat sat on the mat .",
    "do n't stop , the dog did n't bark !",
    "antidisestablishmentarianism is a long word",
    "hello world , hello cat",
    "it 's the cat 's mat",
] * 20

WORDPIECE = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "do",
    "n't",
    "'",
    "s",
    ",",
    ".",
    "!",
    "hello",
    "world",
    "it",
    "anti",
    "##dis",
    "##est",
    "##ab",
    "##lish",
    "##ment",
    "##arian",
    "##ism",
    *"abcdefghijklmnopqrstuvwxyz",
    *[f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"],
]


def tiny_bert(directory: Path, *, layers: int = 2, max_positions: int = 64) -> Path:
    """Save a tiny WordPiece BERT to ``directory`` and return it."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    tok = BertTokenizer(vocab={w: i for i, w in enumerate(WORDPIECE)}, do_lower_case=True)
    tok.save_pretrained(directory)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(WORDPIECE),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
    )
    BertModel(config).eval().save_pretrained(directory)
    return directory


def tiny_gpt2(directory: Path, *, layers: int = 2) -> Path:
    """Save a tiny byte-level BPE GPT-2 to ``directory`` and return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2Model, GPT2Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(CORPUS, trainer)
    special = "<|endoftext|>"
    tok = GPT2Tokenizer(
        tokenizer_object=bpe, bos_token=special, eos_token=special, unk_token=special
    )
    tok.save_pretrained(directory)
    torch.manual_seed(0)
    eos = bpe.token_to_id(special)
    config = GPT2Config(
        vocab_size=bpe.get_vocab_size(),
        n_embd=32,
        n_layer=layers,
        n_head=2,
        n_positions=64,
        bos_token_id=eos,
        eos_token_id=eos,
    )
    GPT2Model(config).eval().save_pretrained(directory)
    return directory


def tiny_sentencepiece(directory: Path) -> Path:
    """Save a tiny BERT with a SentencePiece-style (Metaspace + BPE) tokenizer."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    sp = Tokenizer(models.BPE(unk_token="<unk>"))
    sp.pre_tokenizer = pre_tokenizers.Metaspace()
    sp.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=["<pad>", "<unk>", "<s>", "</s>"])
    sp.train_from_iterator(CORPUS, trainer)
    sp.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)]
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=sp,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
    )
    tok.save_pretrained(directory)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=sp.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    BertModel(config).eval().save_pretrained(directory)
    return directory
