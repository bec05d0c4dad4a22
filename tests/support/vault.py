"""The vault prompt of issue 56, shared by the tests and the benchmarks: a fact first ("The code for the vault is
4817."), about VAULT_FILLER tokens of the built-in long text after it, and the question last."""

from model_utils.experiments.texts import builtin_text

VAULT_FACT = "The code for the vault is 4817."
VAULT_QUESTION = "What is the code for the vault?"
VAULT_ANSWER = "4817"
VAULT_FILLER = 1600  # tokens of filler, at most: whole paragraphs of the built-in long text


def vault_prompt(tokenizer, filler_tokens: int = VAULT_FILLER) -> str:
    """The fact, the first whole paragraphs of the built-in long text that fit in `filler_tokens` tokens of
    `tokenizer`, and the question, a blank line apart."""
    kept: list[str] = []
    for paragraph in builtin_text("long").split("\n\n"):
        if len(tokenizer("\n\n".join([*kept, paragraph]), add_special_tokens=False)["input_ids"]) > filler_tokens:
            break
        kept.append(paragraph)
    return "\n\n".join([VAULT_FACT, *kept, VAULT_QUESTION])
