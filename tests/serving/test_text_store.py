"""The server's store of long texts: ids from the content, bounded in texts and characters, least recently used out."""

from components.serving.text_store import ID_LENGTH, TextStore, text_id


def test_the_same_text_gets_the_same_short_id_and_another_text_another():
    assert text_id("a" * 9000) == text_id("a" * 9000)
    assert text_id("a" * 9000) != text_id("a" * 8999 + "b")
    assert len(text_id("x")) == ID_LENGTH


def test_a_kept_text_comes_back_whole():
    store = TextStore()
    text = "The code for the vault is 4817. " + "filler " * 1300
    assert store.get(store.put(text)) == text


def test_the_least_recently_used_text_goes_first_when_the_count_is_passed():
    store = TextStore(max_texts=2)
    first, second = store.put("first text"), store.put("second text")
    assert store.get(first) == "first text"  # now the most recent
    third = store.put("third text")
    assert store.get(second) is None and store.get(first) == "first text" and store.get(third) == "third text"
    assert len(store) == 2


def test_the_character_bound_drops_old_texts_but_keeps_the_newest():
    store = TextStore(max_chars=100)
    old = store.put("o" * 60)
    new = store.put("n" * 60)
    assert store.get(old) is None and store.get(new) == "n" * 60
    huge = store.put("h" * 500)  # larger than the bound alone: kept, as the one text
    assert store.get(huge) == "h" * 500 and len(store) == 1


def test_an_unknown_id_is_none():
    assert TextStore().get("0123456789abcdef") is None
