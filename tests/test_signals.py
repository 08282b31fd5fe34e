"""Each ranking signal as a small table-driven test, plus fusion."""

import sys
import threading

import pytest
import snowballstemmer

from seek.retrieve import fuse, rrf_ranks
from seek.retrieve import signals as sig


@pytest.mark.parametrize(
    ("query", "symbol"),
    [
        ("getUser", True), ("get_user", True), ("HTTP", True), ("Session", True),
        ("_private", True), ("Sinatra::Base", True), ("os.path.join", True), ("a->b", True),
        ("session", False), ("how does getUser work", False), ("", False),
    ],
)  # fmt: skip
def test_symbol_query_classifier(query, symbol):
    assert sig.is_symbol_query(query) is symbol


def test_semantic_weight_by_query_type():
    assert sig.semantic_weight("getUser") == sig.SEMANTIC_WEIGHT_SYMBOL
    assert sig.semantic_weight("where are users loaded") == sig.SEMANTIC_WEIGHT_NL
    assert sig.semantic_weight("getUser", enabled=False) == sig.SEMANTIC_WEIGHT_NL


def test_rrf_two_seconds_beat_one_first():
    scores = fuse([([1, 2], 0.5), ([3, 2], 0.5)], k=60)
    assert max(scores, key=scores.get) == 2
    assert rrf_ranks([7], 60) == {7: 1 / 61}
    assert fuse([([], 0.5), ([], 0.5)], 60) == {}


def test_fusion_weights_and_zero_weight_drops():
    assert fuse([([1], 0.0), ([2], 1.0)], 60) == {2: 1 / 61}


@pytest.mark.parametrize(
    ("content", "name", "expected"),
    [
        ("class UserService:\n    pass", "UserService", True),
        ("def load_user(x):", "load_user", True),
        ("func (s *Server) Serve() {}", "Serve", True),  # a Go method (issue 13)
        ("func (s *Server) ServeHTTP() {}", "Serve", False),
        ("go func() (Serve)", "Serve", False),
        ("pub fn parse<T>(x: T)", "parse", True),
        ("defmodule Phoenix.Router do", "Router", True),
        ("export interface Props {", "Props", True),
        ("x = UserService()", "UserService", False),
        ("Class UserService", "UserService", False),  # keywords are case-sensitive
        ("create table users (id int);", "users", True),  # SQL is not
        ("class UserServiceFactory:", "UserService", False),
    ],
)
def test_defines(content, name, expected):
    assert sig.defines(content, name) is expected


@pytest.mark.parametrize(
    ("stem", "name", "expected"),
    [("user_service", "UserService", True), ("users", "user", True), ("user", "User", True),
     ("service", "UserService", False)],
)  # fmt: skip
def test_stem_names_symbol(stem, name, expected):
    assert sig.stem_names_symbol(stem, name) is expected


def test_symbol_boost_and_pull_in():
    contents = ["x = Router()", "defmodule Phoenix.Router do", "class Router:", "y"]
    stems = ["app", "router", "other", "router"]
    scores = {0: 1.0, 2: 0.5}
    groups = sig.chunks_by_stem(stems)
    sig.symbol_query_boost(scores, "Phoenix.Router", 1.0, contents, stems, groups)
    assert scores[0] == 1.0  # uses, does not define
    assert scores[2] == 0.5 + 3.0  # defines, file not named after it
    assert scores[1] == 3.0 * 1.5  # not a candidate: pulled in, same-name file tier
    assert 3 not in scores  # same-name file without the definition


def test_embedded_identifier_boost_half_strength_and_prefix_stems():
    contents = ["class StateManager {", "const a = 1"]
    stems = ["state", "state"]
    scores = {1: 1.0}
    groups = sig.chunks_by_stem(stems)
    sig.embedded_identifier_boost(
        scores, "where is the StateManager built", 1.0, contents, stems, groups
    )
    assert scores == {1: 1.0, 0: 1.5}  # state.ts is a prefix of StateManager: pulled in
    untouched = {1: 1.0}
    sig.embedded_identifier_boost(untouched, "plain words only", 1.0, contents, stems, groups)
    assert untouched == {1: 1.0}


def test_stem_boost_ratio_and_prefixes():
    paths = ["src/dependencies/resolve.py", "src/other/misc.py"]
    scores = {0: 1.0, 1: 1.0}
    sig.stem_boost(scores, "how is a dependency resolved", 1.0, paths)
    # Stemmed: "dependency"/"dependencies" -> "depend", "resolved"/"resolve" -> "resolv".
    assert scores == {0: 2.0, 1: 1.0}
    sig.stem_boost(scores, "resolving things", 1.0, paths)  # 1 of 2 words matches
    assert scores == {0: 2.5, 1: 1.0}


def test_stem_boost_prefix_match_needs_three_letters():
    scores = {0: 1.0}
    sig.stem_boost(scores, "readers", 1.0, ["src/Readers/LaTeX.hs"])
    assert scores == {0: 2.0}
    scores = {0: 1.0}
    sig.stem_boost(scores, "reads", 1.0, ["src/Readers/LaTeX.hs"])  # read ~ reader
    assert scores == {0: 2.0}
    scores = {0: 1.0}
    sig.stem_boost(scores, "xy zz", 1.0, ["x/xyz.py"])  # no word longer than 2 letters
    assert scores == {0: 1.0}


def test_file_coherence_boosts_each_files_best_chunk():
    paths = ["a.py", "a.py", "b.py"]
    scores = {0: 1.0, 1: 1.0, 2: 1.0}
    sig.file_coherence(scores, paths)
    assert scores[0] == pytest.approx(1.0 + 0.2 * 1.0 * 2 / 2)
    assert scores[1] == 1.0
    assert scores[2] == pytest.approx(1.0 + 0.2 * 1.0 * 1 / 2)


@pytest.mark.parametrize(
    ("path", "factor"),
    [
        ("src/app.py", 1.0), ("tests/test_app.py", 0.3), ("pkg/app_test.go", 0.3),
        ("src/FooTest.java", 0.3), ("lib/__init__.py", 0.5), ("src/compat/x.py", 0.3),
        ("examples/demo.py", 0.3), ("types/index.d.ts", 0.7), ("spec/a_spec.rb", 0.3),
        ("src/contest.py", 1.0), ("absl/container/btree_test.cc", 0.3),
        ("base/log_unittest.cc", 0.3), ("src/testing.cc", 1.0),
    ],
)  # fmt: skip
def test_path_penalty(path, factor):
    assert sig.path_penalty(path) == pytest.approx(factor)


def test_file_saturation_decays_repeats():
    paths = ["a", "a", "a", "b"]
    scores = {0: 1.0, 1: 0.9, 2: 0.8, 3: 0.5}
    top = sig.select_top(scores, paths, k=3)
    assert [chunk for chunk, _ in top] == [0, 3, 1]  # 0.9 * 0.5 = 0.45 < 0.5
    assert top[2][1] == pytest.approx(0.45)
    assert [c for c, _ in sig.select_top(scores, paths, k=3, saturate=False)] == [0, 1, 2]


@pytest.mark.parametrize(
    ("path", "non_code"),
    [("src/app.py", False), ("docs/guide.md", True), ("config.yaml", True), ("Makefile", True),
     ("README", True), (".github/x.yml", True), ("lib/a.rs", False), ("schema.sql", False)],
)  # fmt: skip
def test_non_code_files(path, non_code):
    assert sig.is_non_code(path) is non_code


def test_non_code_penalty_halves_docs():
    scores = {0: 1.0, 1: 1.0}
    sig.apply_non_code_penalty(scores, ["a.py", "a.md"])
    assert scores == {0: 1.0, 1: sig.NON_CODE_FACTOR}


def test_stemming_from_many_threads_gives_the_sequential_stems():
    # A server stems on several threads at once; a shared snowball stemmer without a lock
    # returned wrong stems and raised IndexError (issue 20).
    stems = ("connect", "retri", "handl", "pars", "configur", "serializ", "dispatch", "render")
    suffixes = ("ed", "ing", "ers", "ations", "ness", "ive", "ly", "s")
    words = [f"{s}{x}{i}x" for i in range(60) for s in stems for x in suffixes]
    expected = {w: snowballstemmer.stemmer("english").stemWord(w) for w in words}
    failures: list[str] = []

    def work(part: list[str]) -> None:
        try:
            failures.extend(w for w in part if sig.english_stem(w) != expected[w])
        except Exception as exc:  # noqa: BLE001 - the race raised IndexError
            failures.append(repr(exc))

    sig.english_stem.cache_clear()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(words[i::8],)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        sig.english_stem.cache_clear()
    assert failures == []
