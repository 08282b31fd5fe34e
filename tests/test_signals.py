"""Each ranking signal as a small table-driven test, plus fusion."""

import random
import re
import sys
import threading

import pytest
import snowballstemmer

from seek.retrieve import fuse, rrf_ranks
from seek.retrieve.signals import boosts, definitions, names, penalties
from seek.retrieve.signals import query as query_kind


@pytest.mark.parametrize(
    ("query", "symbol"),
    [
        ("getUser", True), ("get_user", True), ("HTTP", True), ("Session", True),
        ("_private", True), ("Sinatra::Base", True), ("os.path.join", True), ("a->b", True),
        ("session", False), ("how does getUser work", False), ("", False),
    ],
)  # fmt: skip
def test_symbol_query_classifier(query, symbol):
    assert query_kind.is_symbol_query(query) is symbol


def test_semantic_weight_by_query_type():
    assert query_kind.semantic_weight("getUser") == query_kind.SEMANTIC_WEIGHT_SYMBOL
    assert query_kind.semantic_weight("where are users loaded") == query_kind.SEMANTIC_WEIGHT_NL
    assert query_kind.semantic_weight("getUser", enabled=False) == query_kind.SEMANTIC_WEIGHT_NL


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
    assert definitions.defines(content, name) is expected


@pytest.mark.parametrize(
    ("stem", "name", "expected"),
    [("user_service", "UserService", True), ("users", "user", True), ("user", "User", True),
     ("service", "UserService", False)],
)  # fmt: skip
def test_stem_names_symbol(stem, name, expected):
    assert names.stem_names_symbol(stem, name) is expected


def test_symbol_boost_and_pull_in():
    contents = ["x = Router()", "defmodule Phoenix.Router do", "class Router:", "y"]
    stems = ["app", "router", "other", "router"]
    scores = {0: 1.0, 2: 0.5}
    groups = names.chunks_by_stem(stems)
    definitions.symbol_query_boost(scores, "Phoenix.Router", 1.0, contents, stems, groups)
    assert scores[0] == 1.0  # uses, does not define
    assert scores[2] == 0.5 + 3.0  # defines, file not named after it
    assert scores[1] == 3.0 * 1.5  # not a candidate: pulled in, same-name file tier
    assert 3 not in scores  # same-name file without the definition


def test_graph_definitions_of_a_symbol_join_with_the_definition_bonus():
    stems = ["arg", "action", "command", "parser", "tests"]
    located = [
        (1, "enum", None, True),  # the definition, in a file not named after it
        (1, "enum", None, True),  # the same chunk twice (a second definition in it): once
        (2, "field", "Command", True),  # a field is not a definition of the symbol
        (3, "method", "Parser", True),
        (4, "function", None, False),  # a one-line declaration (a prototype)
    ]
    scores = {0: 1.0}
    definitions.graph_definition_boost(scores, "ArgAction", 1.0, located, stems)
    assert scores == {0: 1.0, 1: 3.0, 3: 3.0}
    qualified = {0: 1.0}
    definitions.graph_definition_boost(qualified, "Parser.ArgAction", 1.0, located, stems)
    assert qualified == {0: 1.0, 3: 3.0}  # Parser's, not one at file level in action.rs
    by_file = {}
    definitions.graph_definition_boost(by_file, "action.ArgAction", 1.0, located, stems)
    assert by_file == {1: 3.0}  # at file level in the file named after the qualifier
    same_name = {}
    definitions.graph_definition_boost(same_name, "Action", 2.0, [(1, "class", None, True)], stems)
    assert same_name == {1: 2.0 * 3.0 * 1.5}  # the same-name file tier


def test_symbol_query_boost_says_how_many_chunks_define_the_symbol():
    contents = ["x = Router()", "class Router:", "void route() {"]
    stems = ["app", "other", "other"]
    groups = names.chunks_by_stem(stems)
    assert (
        definitions.symbol_query_boost({0: 1.0, 1: 1.0}, "Router", 1.0, contents, stems, groups)
        == 1
    )
    assert (
        definitions.symbol_query_boost({0: 1.0, 2: 1.0}, "route", 1.0, contents, stems, groups) == 0
    )


def test_embedded_identifier_boost_half_strength_and_prefix_stems():
    contents = ["class StateManager {", "const a = 1"]
    stems = ["state", "state"]
    scores = {1: 1.0}
    groups = names.chunks_by_stem(stems)
    definitions.embedded_identifier_boost(
        scores, "where is the StateManager built", 1.0, contents, stems, groups
    )
    assert scores == {1: 1.0, 0: 1.5}  # state.ts is a prefix of StateManager: pulled in
    untouched = {1: 1.0}
    definitions.embedded_identifier_boost(
        untouched, "plain words only", 1.0, contents, stems, groups
    )
    assert untouched == {1: 1.0}


def test_stem_boost_ratio_and_prefixes():
    paths = ["src/dependencies/resolve.py", "src/other/misc.py"]
    scores = {0: 1.0, 1: 1.0}
    boosts.stem_boost(scores, "how is a dependency resolved", 1.0, paths)
    # Stemmed: "dependency"/"dependencies" -> "depend", "resolved"/"resolve" -> "resolv".
    assert scores == {0: 2.0, 1: 1.0}
    boosts.stem_boost(scores, "resolving things", 1.0, paths)  # 1 of 2 words matches
    assert scores == {0: 2.5, 1: 1.0}


def test_stem_boost_prefix_match_needs_three_letters():
    scores = {0: 1.0}
    boosts.stem_boost(scores, "readers", 1.0, ["src/Readers/LaTeX.hs"])
    assert scores == {0: 2.0}
    scores = {0: 1.0}
    boosts.stem_boost(scores, "reads", 1.0, ["src/Readers/LaTeX.hs"])  # read ~ reader
    assert scores == {0: 2.0}
    scores = {0: 1.0}
    boosts.stem_boost(scores, "xy zz", 1.0, ["x/xyz.py"])  # no word longer than 2 letters
    assert scores == {0: 1.0}


def test_file_coherence_boosts_each_files_best_chunk():
    paths = ["a.py", "a.py", "b.py"]
    scores = {0: 1.0, 1: 1.0, 2: 1.0}
    boosts.file_coherence(scores, paths)
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
    assert penalties.path_penalty(path) == pytest.approx(factor)


def test_file_saturation_decays_repeats():
    paths = ["a", "a", "a", "b"]
    scores = {0: 1.0, 1: 0.9, 2: 0.8, 3: 0.5}
    top = penalties.select_top(scores, paths, k=3)
    assert [chunk for chunk, _ in top] == [0, 3, 1]  # 0.9 * 0.5 = 0.45 < 0.5
    assert top[2][1] == pytest.approx(0.45)
    assert [c for c, _ in penalties.select_top(scores, paths, k=3, saturate=False)] == [0, 1, 2]


@pytest.mark.parametrize(
    ("path", "non_code"),
    [("src/app.py", False), ("docs/guide.md", True), ("config.yaml", True), ("Makefile", True),
     ("README", True), (".github/x.yml", True), ("lib/a.rs", False), ("schema.sql", False)],
)  # fmt: skip
def test_non_code_files(path, non_code):
    assert penalties.is_non_code(path) is non_code


def test_non_code_penalty_halves_docs():
    scores = {0: 1.0, 1: 1.0}
    penalties.apply_non_code_penalty(scores, ["a.py", "a.md"])
    assert scores == {0: 1.0, 1: penalties.NON_CODE_FACTOR}


@pytest.mark.parametrize(
    ("stem", "score"),
    [
        ("state_manager", 4.5),  # the name with underscores dropped: a same-name file, x1.5
        ("statemanager", 4.5),
        ("state", 3.0),  # a prefix of 4+ letters (state.ts for StateManager)
        ("stat", 3.0),
        ("sta", None),  # 3 letters are too short to be a prefix match
        ("state_man", 3.0),  # a prefix once its underscores are dropped
        ("other_thing", None),
        ("manager", None),  # a suffix is not a prefix
        ("st_at", 3.0),  # "stat" once its underscore is dropped: 4 letters are enough
    ],
)
def test_embedded_identifier_pull_in_by_file_stem(stem, score):
    # A definition missing from both retrievers joins at 3 x 0.5 x best (x1.5 in a file
    # named after it) when its file's stem names the identifier or a 4+ letter prefix of it.
    scores: dict[int, float] = {}
    contents, stems = ["class StateManager {"], [stem]
    groups = names.chunks_by_stem(stems)
    definitions.embedded_identifier_boost(
        scores, "who builds the StateManager", 2.0, contents, stems, groups
    )
    assert scores == ({} if score is None else {0: pytest.approx(score)})


# -- more exact cases (each pins a rule of signals.py that a plausible edit could break) ------
def test_penalties_multiply_the_score():
    scores = {0: 2.0, 1: 2.0, 2: 4.0}
    penalties.apply_path_penalties(scores, ["src/a.py", "tests/test_a.py", "docs/a.md"])
    assert scores == {0: 2.0, 1: pytest.approx(0.6), 2: 4.0}
    penalties.apply_non_code_penalty(scores, ["src/a.py", "tests/test_a.py", "docs/a.md"])
    assert scores == {0: 2.0, 1: pytest.approx(0.6), 2: pytest.approx(2.0)}


def test_pull_in_takes_every_defining_chunk_of_a_named_file():
    contents = ["class User:", "class User(Base):", "x = 1"]
    stems = ["user", "user", "user"]
    scores = {0: 1.0}  # the first chunk is already a candidate, the second is not
    definitions.symbol_query_boost(
        scores, "User", 2.0, contents, stems, names.chunks_by_stem(stems)
    )
    # 3 x best, x1.5 in user.py: the candidate gains it, the missing definition joins with it.
    assert scores == {0: pytest.approx(1.0 + 9.0), 1: pytest.approx(9.0)}


def test_a_qualified_symbol_pulls_in_the_file_named_after_its_last_part():
    contents, stems = ["class User:"], ["user"]
    scores: dict[int, float] = {}
    definitions.symbol_query_boost(scores, "app.models.User", 1.0, contents, stems, {"user": [0]})
    assert scores == {0: pytest.approx(4.5)}
    assert query_kind.symbol_names("os.path.join") == {"join", "os.path.join"}
    assert query_kind.symbol_names("getUser") == {"getUser"}


def test_defines_is_case_insensitive_for_sql_only():
    assert definitions.defines("CREATE TABLE users (id int);", "Users")
    assert not definitions.defines("class userservice:", "UserService")


def test_file_coherence_scales_with_the_best_score_and_ignores_all_zero_scores():
    scores = {0: 2.0, 1: 1.0}
    boosts.file_coherence(scores, ["a.py", "b.py"])
    assert scores == {0: pytest.approx(2.0 + 0.2 * 2.0), 1: pytest.approx(1.0 + 0.2 * 2.0 / 2)}
    zeros = {0: 0.0, 1: 0.0}
    boosts.file_coherence(zeros, ["a.py", "b.py"])
    assert zeros == {0: 0.0, 1: 0.0}


def keyword_matches(keywords: set[str], parts: frozenset[str]) -> int:
    """The pairwise rule :func:`names.path_matches` replaced (issue 14), kept as its reference:
    keywords equal to a part, or sharing a prefix of at least 3 characters with one."""
    matches = len(keywords & parts)
    for word in keywords - parts:
        for part in parts:
            short, long_ = (word, part) if len(word) <= len(part) else (part, word)
            if len(short) >= names.STEM_PREFIX_MIN_CHARS and long_.startswith(short):
                matches += 1
                break
    return matches


def test_keyword_matches_counts_each_prefix_match_either_way():
    assert keyword_matches({"readers"}, frozenset({"read"})) == 1  # the part is shorter
    assert keyword_matches({"api"}, frozenset({"apis"})) == 1  # 3 letters are enough
    assert keyword_matches({"ap"}, frozenset({"apis"})) == 0
    assert keyword_matches({"pars", "lexe", "tree"}, frozenset({"parser", "lexer"})) == 2


def test_query_keywords_keep_words_of_three_letters_or_more_in_any_case():
    assert names.query_keywords("the API of io") == {"api"}
    assert names.query_keywords("Parser") == {"parser"}


def test_stem_boost_threshold_is_a_tenth_of_the_words_and_scales_with_best():
    # 10 keywords, one of them the file's name: a ratio of exactly 0.10 still counts.
    query = "parser alpha bravo charlie delta echo foxtrot golf hotel india"
    assert len(names.query_keywords(query)) == 10
    scores = {0: 1.0}
    boosts.stem_boost(scores, query, 2.0, ["src/parser.py"])
    assert scores == {0: pytest.approx(1.0 + 2.0 * 0.1)}


def test_stem_names_symbol_with_underscores_and_plurals():
    assert names.stem_names_symbol("user_sessions", "user_session")  # plural of the snake name
    assert names.stem_names_symbol("user_sessions", "UserSession")  # and of the flat one
    assert not names.stem_names_symbol("sessions", "UserSession")


def test_select_top_stops_once_nothing_left_can_enter():
    # Chunk ids deliberately not in score order; a's repeats decay by half each.
    paths = ["c", "b", "a", "a", "a"]
    scores = {4: 1.0, 3: 0.9, 2: 0.8, 1: 0.5, 0: 0.1}
    top = penalties.select_top(scores, paths, k=3)
    assert top == [(4, 1.0), (1, 0.5), (3, pytest.approx(0.45))]
    # The k-th pick sets the floor: a later chunk above it still enters.
    assert penalties.select_top({0: 1.0, 1: 0.9, 2: 0.6}, ["a", "a", "b"], k=2) == [
        (0, 1.0),
        (2, 0.6),
    ]
    assert penalties.select_top({0: 0.1, 1: 0.9, 2: 0.5}, ["x", "y", "z"], k=2, saturate=False) == [
        (1, 0.9),
        (2, 0.5),
    ]


def test_a_short_identifier_is_pulled_in_from_the_file_named_after_it():
    # Three letters are too few for a prefix match, but the file's exact name still counts.
    scores: dict[int, float] = {}
    definitions.embedded_identifier_boost(
        scores, "where is xYz built", 1.0, ["class xYz:"], ["xyz"], {"xyz": [0]}
    )
    assert scores == {0: pytest.approx(3 * 0.5 * 1.5)}


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
            failures.extend(w for w in part if names.english_stem(w) != expected[w])
        except Exception as exc:  # the race raised IndexError
            failures.append(repr(exc))

    names.english_stem.cache_clear()
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
        names.english_stem.cache_clear()
    assert failures == []


def test_stem_lookups_pull_in_the_same_chunks_as_testing_every_stem():
    """StemGroups (issue 14) finds the stems the pull-in scans test one by one, in order."""
    import random

    rng = random.Random(7)
    pieces = ["state", "manager", "user", "users", "service", "s", "st", "http", "client", ""]
    stems = ["_".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(400)]
    stems += ["statemanager", "state", "stat", "users", "user_service", "userservices", ""]
    contents = [
        "class StateManager:\n    pass\nclass UserService:\n    pass\ndef users(): pass\n"
        "class HttpClient:\n    pass\n"
    ] * len(stems)
    queries = ["UserService", "users", "StateManager", "HttpClient", "app.UserService",
               "where is StateManager built", "how does UserService use HttpClient"]  # fmt: skip
    pulled_in = set()
    for query in queries:
        for boost in (definitions.symbol_query_boost, definitions.embedded_identifier_boost):
            plain = dict(names.chunks_by_stem(stems))
            indexed = names.chunks_by_stem(stems)
            assert isinstance(indexed, names.StemGroups) and not isinstance(plain, names.StemGroups)
            a, b = {0: 1.0, 5: 0.5}, {0: 1.0, 5: 0.5}
            boost(a, query, 1.0, contents, stems, plain)
            boost(b, query, 1.0, contents, stems, indexed)
            assert list(a.items()) == list(b.items()), (query, boost.__name__)
            if len(a) > 2:
                pulled_in.add(boost)
    assert pulled_in == {definitions.symbol_query_boost, definitions.embedded_identifier_boost}


def _full_pattern_defines(content: str, name: str) -> bool:
    """What ``defines`` was before issue 14: the whole pattern searched over the text."""
    if name not in content and name.lower() not in content.lower():
        return False
    code, sql = definitions._definition_patterns(name)
    return code.search(content) is not None or sql.search(content) is not None


DEFINITION_TEXTS = [
    "func (v *Viper) ReadInConfig() error {\n\treturn nil\n}",
    "type Config struct {\n}\ntypedef struct node Node;\n",
    "abstract class Shape:\n    data class Point(val x: Int)\n",
    "class\n   Spread\n  (Base):\n",  # keyword and name on different lines
    "export function useStore<T>(init: T) {}\nfn parse_args() -> Args;",
    "def foo.bar.baz(x):\nmodule Foo::Bar::Baz\n",
    "create table Users (id int);\nCREATE VIEW active_users AS\n",
    "func ( func Inner) Outer(",  # a keyword inside a receiver
    "x = 1  # class Doc: mentioned in a comment\nclass\tTabbed;",
    "class Ünicode:\n    def naïve(self): pass\nclass İstanbul:\n",
    "interface  Foo<T> { }\nenum Color { Red }\nprotocol P {}\nrecord R(int x) {}",
    "functional Foo(\nfunc\n",
]


@pytest.mark.parametrize("content", DEFINITION_TEXTS)
def test_defines_at_sites_agrees_with_the_full_pattern(content):
    words = set(re.findall(r"[\w.:]+", content)) | {"foo.bar.baz", "Bar::Baz", "USERS", "x"}
    words |= {w.lower() for w in words} | {w.upper() for w in words} | {"", "(v", " Foo"}
    for name in words:
        assert definitions.defines(content, name) == _full_pattern_defines(content, name), name


def test_path_matches_counts_as_keyword_matches_does():
    rng = random.Random(7)
    letters = "abcdeirst"
    for _ in range(3000):
        folder = "".join(rng.choice(letters + "_") for _ in range(rng.randint(1, 9)))
        stem = "".join(rng.choice(letters + "_A") for _ in range(rng.randint(1, 9)))
        path = f"src/{folder}/{stem}.py"
        words = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(4)}
        expected = keyword_matches(words, names.path_parts(path))
        assert names.path_matches(words, path) == expected, (words, path)
