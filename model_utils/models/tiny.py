"""The tiny random model: a seeded 3-layer llama with a byte-level tokenizer, built in code (nothing downloaded),
for tests and for trying the tools without the bundled model."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast


def byte_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level tokenizer (one token per UTF-8 byte, no merges) built in code: any text, nothing downloaded."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    vocab["<|endoftext|>"] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>")


def tiny_random_config(vocab_size: int) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,  # >= 2 so later layers see what an earlier layer's temperature changed
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention, as in the bundled model
        head_dim=16,
        max_position_embeddings=1024,
        # large enough that heads are far from uniform at T = 1 (mean normalized entropy ~0.84), small enough that
        # transformers' own eager and SDPA logits agree to 6e-6 (at 0.2 they differ by 1.3e-5)
        initializer_range=0.15,
        tie_word_embeddings=False,
    )


def build_tiny_random() -> tuple[torch.nn.Module, object, str]:
    tokenizer = byte_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(tiny_random_config(len(tokenizer)))
    return model, tokenizer, "built in code"

