import pytest
from hypothesis import given
from hypothesis import strategies as st

from seek.text import (
    is_follow_up,
    keyword_column,
    keyword_query,
    keyword_text,
    path_keywords,
    search_text,
    split_identifier,
)


def test_split_identifier_examples():
    assert split_identifier("HTTPServer") == ["http", "server"]
    assert split_identifier("utf8Decoder") == ["utf8", "decoder"]
    assert split_identifier("i18n") == ["i18n"]
    assert split_identifier("MAX_FILE_BYTES") == ["max", "file", "bytes"]
    assert split_identifier("fetchModelEmbedding") == ["fetch", "model", "embedding"]
    assert split_identifier("get_environ_proxies") == ["get", "environ", "proxies"]


def test_keyword_text_repeats_and_splits():
    assert keyword_text("const chunk") == "const chunk"
    assert keyword_text("fetchModelEmbedding(x)") == "fetchmodelembedding fetch model embedding"
    assert keyword_text("a = b; chunk chunk") == "chunk chunk"  # 1-letter tokens are not words


def test_path_keywords():
    assert path_keywords("src/extension/status-bar.ts") == "src extension status bar ts"
    assert path_keywords("a/statusBar/a.py") == "a statusbar status bar py"


def test_keyword_column_is_path_then_code():
    assert keyword_column("lib/x.py", "def getValue") == "lib x py def getvalue get value"


def test_keyword_query_examples():
    assert keyword_query("where does fetchModelEmbedding call getProviderOrigin?") == (
        "fetchmodelembedding fetch model embedding call getproviderorigin get provider origin"
    )
    assert keyword_query("how is i18n set up") == "i18n set up"
    assert keyword_query("what is it?") == ""


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{1,30}", fullmatch=True)


@given(identifiers)
def test_split_parts_are_lowercase_pieces_of_the_token(token):
    lowered = token.lower()
    for part in split_identifier(token):
        assert len(part) > 1
        assert part == part.lower()
        assert "_" not in part
        assert part in lowered


@given(identifiers)
def test_parts_keep_every_letter_in_order(token):
    # Joining the parts gives the token without underscores and 1-char pieces, in order.
    joined = "".join(split_identifier(token))
    remaining = iter(token.lower().replace("_", ""))
    assert all(ch in remaining for ch in joined)


@pytest.mark.parametrize(
    "question",
    ["why?", "and how is it tested?", "what about caching", "explain this",
     "does that use a cache", "where is it called from"],
)  # fmt: skip
def test_follow_ups(question):
    assert is_follow_up(question)


@pytest.mark.parametrize(
    "question",
    ["where is the login handled", "fix the bug in parseConfig",
     "how does the embedding indexer decide what to skip"],
)  # fmt: skip
def test_standalone_questions(question):
    assert not is_follow_up(question)


def test_search_text_prepends_the_previous_question_to_follow_ups():
    assert search_text(" and how is it tested? ", "where is the login handled") == (
        "where is the login handled\nand how is it tested?"
    )
    assert search_text("where is the login handled", "earlier") == "where is the login handled"
    assert search_text("why?", None) == "why?"


def test_two_letter_parts_are_kept_and_one_letter_parts_dropped():
    # text.py / reference §3.3: "parts of one character are dropped" (and only those).
    assert split_identifier("getIdOrDb") == ["get", "id", "or", "db"]
    assert split_identifier("x_axis_y") == ["axis"]
