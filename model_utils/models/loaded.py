"""A loaded model and the facts the engine and the pages read from its config: layers, heads, trained length,
sliding windows, whether positions are a learned table, and the model's own way from hidden states to logits."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model_utils.core.progress import LOAD, OnProgress, Progress, report_progress

LEARNED_POSITION_TABLES = ("wpe", "embed_positions", "position_embeddings")  # GPT-2, OPT, BERT-style names


@dataclass(kw_only=True)
class LoadedModel:
    """A model in eval mode with its tokenizer. Shared by every session: holds no per-call state."""

    name: str
    model: torch.nn.Module
    tokenizer: object
    source: str  # where the weights came from: "gguf", "cache", "built in code", or a path / hub id
    load_seconds: float

    @property
    def config(self):
        return self.model.config

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def text_config(self):
        """The language model's own config (a multimodal checkpoint such as Gemma 3 4B nests it)."""
        return self.config.get_text_config()

    @property
    def n_layers(self) -> int:
        return self.text_config.num_hidden_layers

    @property
    def n_heads(self) -> int:
        return self.text_config.num_attention_heads

    @property
    def max_positions(self) -> int:
        """The model's trained context length (`max_position_embeddings`; GPT-2 maps `n_positions` onto it)."""
        return self.text_config.max_position_embeddings

    def sliding_windows(self) -> list[int | None]:
        """Per layer, how many keys a query sees in a sliding-window layer, None for full causal attention: per
        `layer_types` where the config has them (Gemma, Qwen2), else one `sliding_window` for all (Mistral, Phi-3)."""
        config = self.text_config
        window = getattr(config, "sliding_window", None)
        if getattr(config, "use_sliding_window", True) is False:  # Qwen2 keeps the number but switches it off
            window = None
        types = getattr(config, "layer_types", None)
        if types is not None:
            return [window if kind == "sliding_attention" else None for kind in types]
        return [window] * self.n_layers

    def facts(self) -> dict[str, object]:
        """What a user should know about the loaded model, for the sidebar and the reports."""
        config = self.text_config
        windows = [w for w in self.sliding_windows() if w]
        facts = {"architecture": config.model_type, "layers": self.n_layers, "heads": self.n_heads,
                 "kv heads": getattr(config, "num_key_value_heads", None) or self.n_heads,
                 "trained length": self.max_positions,
                 "positions": "learned table" if self.learned_positions else "rotary or relative"}
        if windows:
            facts["sliding window"] = f"{windows[0]:,} keys in {len(windows)} of {self.n_layers} layers"
        if getattr(config, "attn_logit_softcapping", None):
            facts["attention soft cap"] = config.attn_logit_softcapping
        return facts

    def next_token_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The next-token logits from the last hidden states, as the model's own forward computes them: the output
        layer, then Granite's division by `logits_scaling`, Cohere's `logit_scale`, Gemma's final soft cap."""
        logits = self.model.get_output_embeddings()(hidden)
        config = self.text_config
        if getattr(config, "logits_scaling", None):
            logits = logits / config.logits_scaling
        if getattr(config, "logit_scale", None):
            logits = logits * config.logit_scale
        softcap = getattr(config, "final_logit_softcapping", None)
        return softcap * torch.tanh(logits / softcap) if softcap else logits

    @property
    def learned_positions(self) -> bool:
        """Whether positions come from a learned table (GPT-2's `wpe`), which has no row past max_positions.
        Rotary models compute their position encoding for any position, so they can run past it."""
        return any(isinstance(module, torch.nn.Embedding) and name.rsplit(".", 1)[-1] in LEARNED_POSITION_TABLES
                   for name, module in self.model.named_modules())


def report_loading(progress: OnProgress | None, fraction: float, detail: str) -> None:
    """A step of loading a model: what happens now, `fraction` of the way."""
    report_progress(progress, Progress(stage=LOAD, fraction=fraction, detail=detail))
