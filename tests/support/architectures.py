"""Tiny random models of the architectures researchers point the explorer at, built in code from transformers' own
config classes (3 layers, hidden size 64, 4 heads, a fixed seed) and saved as local model folders with the byte
tokenizer, so that `load_model(folder)` takes a user's path; `layer_windows` says which layers are banded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    Gemma2Config,
    Gemma3TextConfig,
    GPT2Config,
    GPTNeoXConfig,
    GraniteConfig,
    LlamaConfig,
    MistralConfig,
    Olmo2Config,
    Phi3Config,
    PreTrainedConfig,
    PreTrainedModel,
    Qwen2Config,
    Qwen3Config,
)

from model_utils.models.tiny import byte_tokenizer

VOCAB = len(byte_tokenizer())  # 257: the 256 bytes and <|endoftext|>
END = byte_tokenizer().eos_token_id  # <|endoftext|>, the only special token: bos, eos and pad all point at it
SEED = 0
# As the engine's own tiny llama: heads far from uniform (mean normalized entropy 0.51-0.93 per layer here), yet
# transformers' eager and SDPA logits agree to <= 4.3e-6 in every architecture below (gemma2 has no SDPA: its
# soft cap). Where q and k are RMS-normalised (qwen3, olmo2, gemma3) the initialisation does not set how sharp
# heads are; the scale does.
INIT = 0.15

# Sizes every architecture shares (gpt2 spells them its own way).
SIZES = dict(
    vocab_size=VOCAB,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=3,  # >= 2 so later layers see what an earlier layer's temperature changed
    num_attention_heads=4,
    max_position_embeddings=256,
    bos_token_id=END,
    eos_token_id=END,
    pad_token_id=END,
    tie_word_embeddings=False,
    initializer_range=INIT,
)
GQA = dict(num_key_value_heads=2)  # two query heads share each key/value head


def llama() -> LlamaConfig:
    return LlamaConfig(**SIZES, **GQA)


def qwen2() -> Qwen2Config:
    return Qwen2Config(**SIZES, **GQA)  # released Qwen2 models: use_sliding_window false


def qwen2_sliding() -> Qwen2Config:
    # Qwen2's own rule: layers >= max_window_layers slide; so layer 0 is full, layers 1 and 2 see 12 keys
    return Qwen2Config(**SIZES, **GQA, use_sliding_window=True, sliding_window=12, max_window_layers=1)


def qwen3() -> Qwen3Config:
    return Qwen3Config(**SIZES, **GQA, head_dim=16)


def mistral() -> MistralConfig:
    return MistralConfig(**SIZES, **GQA, sliding_window=None)  # as Mistral-7B-v0.2 and later


def mistral_sliding() -> MistralConfig:
    return MistralConfig(**SIZES, **GQA, sliding_window=16)  # every layer (as v0.1: 4096)


def phi3() -> Phi3Config:
    return Phi3Config(**SIZES, **GQA)


def gpt2() -> GPT2Config:
    return GPT2Config(vocab_size=VOCAB, n_positions=256, n_embd=64, n_layer=3, n_head=4, n_inner=128,
                      bos_token_id=END, eos_token_id=END, pad_token_id=END, tie_word_embeddings=True,
                      initializer_range=INIT)


def gpt_neox() -> GPTNeoXConfig:
    return GPTNeoXConfig(**SIZES)  # Pythia: no grouped-query heads, partial rotary


def olmo2() -> Olmo2Config:
    return Olmo2Config(**SIZES, **GQA)


def granite() -> GraniteConfig:
    # granite-3.0-style multipliers: the attention scale is a config number (here twice head_dim ** -0.5, so a
    # wrong scale shows), and the output logits are divided by logits_scaling
    return GraniteConfig(**SIZES, **GQA, attention_multiplier=0.5, embedding_multiplier=12.0,
                         residual_multiplier=0.22, logits_scaling=4.0)


def gemma3_text() -> Gemma3TextConfig:
    # local layers see the last 8 keys, around a global one; the scale is query_pre_attn_scalar ** -0.5 (8, not
    # head_dim = 16, so a wrong scale shows: q and k are RMS-normalised, so it alone sets how sharp heads are)
    return Gemma3TextConfig(**SIZES, **GQA, head_dim=16, sliding_window=8,
                            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                            query_pre_attn_scalar=8)


def gemma2() -> Gemma2Config:
    # as gemma3_text, plus soft-capped attention logits: cap * tanh(logits / cap). The released cap (50) would
    # barely touch this tiny model's logits; at 10 it moves the output logits by ~0.4, so ignoring it shows
    return Gemma2Config(**SIZES, **GQA, head_dim=16, sliding_window=8,
                        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                        query_pre_attn_scalar=8, attn_logit_softcapping=10.0, final_logit_softcapping=30.0)


CONFIGS: dict[str, Callable[[], PreTrainedConfig]] = {
    "llama": llama,
    "qwen2": qwen2,
    "qwen2_sliding": qwen2_sliding,
    "qwen3": qwen3,
    "mistral": mistral,
    "mistral_sliding": mistral_sliding,
    "phi3": phi3,
    "gpt2": gpt2,
    "gpt_neox": gpt_neox,
    "olmo2": olmo2,
    "granite": granite,
    "gemma3_text": gemma3_text,
    "gemma2": gemma2,
}


def build_model(name: str) -> PreTrainedModel:
    """The seeded tiny random model of `name` (a key of CONFIGS), in eval mode, on transformers' eager attention."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = AutoModelForCausalLM.from_config(CONFIGS[name](), attn_implementation="eager")
    return model.eval()


def save_model_folder(name: str, folder: Path) -> Path:
    """Write `name`'s model and the byte tokenizer into `folder`, as a user's local model folder; return it."""
    build_model(name).save_pretrained(folder)
    byte_tokenizer().save_pretrained(folder)
    return folder


def layer_windows(config: PreTrainedConfig) -> list[int | None]:
    """Per layer, how many keys a query sees (key k is visible to query q iff q - window < k <= q), or None for
    full causal attention, as transformers decides it: per `layer_types` where the config has them, else one
    `sliding_window` for every layer (Mistral, Phi-3)."""
    window = getattr(config, "sliding_window", None)
    types = getattr(config, "layer_types", None)
    if types is not None:
        return [window if kind == "sliding_attention" else None for kind in types]
    return [window] * config.num_hidden_layers
