"""The built-in long text and the built-in corpus: cut from Python's pydoc_data.topics so that they share no text
(the topics repeat one another), no paragraph appears twice, and (bundled tokenizer) every corpus document reaches
the 16,384 tokens the committed tune runs. The longer sweep text (decimal-source) shares no text with either and
reaches the 49,152 tokens of Gemma 3 270M's sweep; the long corpus (builtin-long, Gemma's tune) shares no text with
decimal-source nor within itself, and each of its documents reaches those 49,152 tokens."""

import sysconfig
from pathlib import Path

import pytest

from model_utils.experiments.corpus import LONG_BUILTIN, read_corpus
from model_utils.experiments.texts import (
    LONG_CORPUS_CHARS,
    builtin_corpus,
    builtin_documents,
    builtin_source,
    builtin_text,
    long_builtin_documents,
)

GEMMA_SWEEP_TOKENS = 49_152  # 1.5x Gemma 3 270M's trained length of 32,768: `make sweep-gemma`


def shared(text: str, elsewhere: str) -> list[str]:
    """The 200-character windows of `text` (one every 97 characters) that occur in `elsewhere`."""
    windows = {text[start : start + 200] for start in range(0, len(text) - 200, 97)}
    return [window for window in windows if window in elsewhere]


def paragraphs(text: str) -> list[str]:
    return [part for part in text.split("\n\n") if part.strip()]


def test_the_corpus_shares_no_paragraph_with_the_long_text_nor_within_itself():
    long = paragraphs(builtin_text("long"))
    documents = [paragraphs(text) for _, text in builtin_corpus()]
    assert len(documents) >= 4
    everything = long + [part for document in documents for part in document]
    assert len(everything) == len(set(everything))  # no paragraph twice, anywhere
    seen = set(long)
    for document in documents:
        assert not seen & set(document)
        seen |= set(document)


def test_no_long_stretch_of_the_long_text_is_in_a_corpus_document():
    """Shared text inside a paragraph would escape the paragraph check: no 200-character window of the long text
    occurs in any document of any domain (checked every 97 characters)."""
    long = builtin_text("long")
    corpus = "\n".join(document.text for document in builtin_documents())
    windows = {long[start : start + 200] for start in range(0, len(long) - 200, 97)}
    assert not [window for window in windows if window in corpus]


def test_the_builtin_corpus_has_eight_documents_of_several_domains_the_topics_first():
    documents = builtin_documents()
    assert len(documents) >= 8
    assert len({document.text for document in documents}) == len(documents)
    assert len({document.domain for document in documents}) >= 4
    assert [document.text for document in documents[:4]] == [text for _, text in builtin_corpus()[:4]]
    assert all(document.source and document.domain for document in documents)


@pytest.mark.slow
def test_every_corpus_document_reaches_16384_tokens_and_the_long_text_too(bundled):
    def tokens(text: str) -> int:
        return len(bundled.tokenizer(text)["input_ids"])

    assert tokens(builtin_text("long")) >= 16_384
    assert min(tokens(document.text) for document in builtin_documents()) >= 16_384


def test_the_longer_sweep_text_is_the_start_of_the_decimal_module_and_shares_no_text():
    """No 200-character window of it (every 97 characters) is in the long text or in any corpus document."""
    text = builtin_text("decimal-source")
    whole = (Path(sysconfig.get_paths()["stdlib"]) / "_pydecimal.py").read_text(encoding="utf-8")
    assert 190_000 < len(text) <= 200_000 and whole.startswith(text) and whole[len(text)] == "\n"
    assert builtin_source("decimal-source") == "Lib/_pydecimal.py (PSF License)"
    elsewhere = "\n".join([builtin_text("long"), *(document.text for document in builtin_documents())])
    windows = {text[start : start + 200] for start in range(0, len(text) - 200, 97)}
    assert not [window for window in windows if window in elsewhere]


@pytest.mark.slow
def test_the_longer_sweep_text_reaches_49152_tokens_of_the_bundled_model(bundled):
    assert len(bundled.tokenizer(builtin_text("decimal-source"))["input_ids"]) >= GEMMA_SWEEP_TOKENS


@pytest.mark.models
def test_the_longer_sweep_text_reaches_gemmas_sweep_length():
    from model_utils import load_model
    from model_utils.core.names import GEMMA

    gemma = load_model(GEMMA)
    assert len(gemma.tokenizer(builtin_text("decimal-source"))["input_ids"]) >= GEMMA_SWEEP_TOKENS


def test_the_long_corpus_has_four_documents_of_three_kinds_the_first_three_of_different_kinds():
    documents = long_builtin_documents()
    assert len(documents) == 4 and len({document.text for document in documents}) == 4
    assert [document.domain for document in documents] == ["reference documentation", "Python source code",
                                                           "API docstrings", "Python source code"]
    assert all(document.source and document.name for document in documents)
    assert documents[0].text == "\n\n".join(text for _, text in builtin_corpus())  # the topics after the long text
    assert [document.source for document in documents[1:]] == [
        "Lib/inspect.py + Lib/pydoc.py (PSF License)", "numpy/_core/_add_newdocs.py (BSD-3-Clause)",
        "Lib/turtle.py + Lib/tarfile.py (PSF License)"]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    turtle = "\n".join((stdlib / name).read_text(encoding="utf-8") for name in ("turtle.py", "tarfile.py"))
    assert turtle.startswith(documents[3].text) and LONG_CORPUS_CHARS - 200 < len(documents[3].text) \
        <= LONG_CORPUS_CHARS and turtle[len(documents[3].text)] == "\n"  # cut at a line break


def test_no_long_corpus_document_shares_text_with_gemmas_sweep_text_or_another():
    """No 200-character window of a document (every 97 characters) is in decimal-source or another document."""
    texts = [builtin_text("decimal-source"), *(document.text for document in long_builtin_documents())]
    for index, text in enumerate(texts[1:], start=1):
        elsewhere = "\n\n".join(other for place, other in enumerate(texts) if place != index)
        assert not shared(text, elsewhere), index


def test_the_tuner_reads_the_long_corpus_with_names_and_domains():
    corpus = read_corpus(LONG_BUILTIN)
    assert [document.name for document in corpus.documents] == [
        "builtin-long topics-after-long", "builtin-long inspect-pydoc-source", "builtin-long numpy-docstrings-whole",
        "builtin-long turtle-tarfile-source"]
    assert [document.domain for document in corpus.documents] == [d.domain for d in long_builtin_documents()]
    assert "Lib/inspect.py + Lib/pydoc.py (PSF License)" in corpus.source and not corpus.duplicates
    assert len(read_corpus(LONG_BUILTIN, 2).documents) == 2


@pytest.mark.models
def test_every_long_corpus_document_reaches_gemmas_tune_length():
    from model_utils import load_model
    from model_utils.core.names import GEMMA

    gemma = load_model(GEMMA)
    tokens = [len(gemma.tokenizer(document.text)["input_ids"]) for document in long_builtin_documents()]
    assert min(tokens) >= GEMMA_SWEEP_TOKENS, tokens
