"""`seek impact` across an interface and its implementations (issue 44 deliver 2;
seek.change.impact's contract step): a change to an interface method's signature reaches
the methods that implement it and their users, and a change to an implementing method
reaches the interface's method and the calls made through the interface. Graphs built by
the real tree-sitter extraction over small sources."""

from __future__ import annotations

from seek.change.impact import impact
from seek.graph import build_graph

GO = {
    "go.mod": b"module example.com/chi\n",
    "chi.go": b"""package chi

type Router interface {
\tHandle(pattern string, h int)
\tHandleFunc(pattern string)
}

type Mux struct{}

func (mx *Mux) Handle(pattern string, h int) {}
func (mx *Mux) HandleFunc(pattern string) {}

// Half has one of Router's methods only: it does not implement Router.
type Half struct{}

func (h *Half) Handle(pattern string, n int) {}
""",
    "serve.go": b"""package chi

func Serve(r Router) {
\tr.Handle("/", 1)
}
""",
    "middleware/profiler.go": b"""package middleware

import "example.com/chi"

func Profiler(m *chi.Mux) {
\tm.Handle("/debug", 2)
}
""",
}


def names(reached):
    return {(r.definition.qualified if r.definition else r.path): r.depth for r in reached}


def subject(graph, path, qualified):
    return next(d for d in graph.outline(path) if d.qualified == qualified)


def test_an_interface_method_reaches_its_implementations_and_their_users():
    graph = build_graph(GO)
    found = names(impact(graph, subject(graph, "chi.go", "Router.Handle"), 2))
    assert found["Mux.Handle"] == 1  # implements it: its signature changes with it
    assert found["Serve"] == 1  # calls it through the interface
    assert found["Profiler"] == 2  # calls the implementation through the concrete type
    assert "Half.Handle" not in found  # Half lacks HandleFunc: not a Router
    assert "Mux.HandleFunc" not in found  # another method of the contract's types


def test_an_implementation_reaches_the_interface_and_calls_through_it():
    graph = build_graph(GO)
    found = names(impact(graph, subject(graph, "chi.go", "Mux.Handle"), 2))
    assert found["Profiler"] == 1
    assert found["Router.Handle"] == 1
    assert found["Serve"] == 2
    assert "Half.Handle" not in found
    alone = names(impact(graph, subject(graph, "chi.go", "Half.Handle"), 3))
    assert alone == {}  # implements nothing, used by nothing


def test_a_class_that_names_the_interface_in_its_header_implements_it():
    graph = build_graph({
        "store.ts": b"""export interface Store {
  dispatch(a: number): void
}
export class MyStore implements Store {
  dispatch(a: number) {}
}
export class Other {
  dispatch(a: number) {}
}
""",
        "run.ts": b"""import { MyStore } from './store'
export function run(s: MyStore) {
  s.dispatch(1)
}
""",
    })  # fmt: skip
    found = names(impact(graph, subject(graph, "store.ts", "Store.dispatch"), 2))
    assert found.keys() == {"MyStore.dispatch", "run"}  # not Other's: its header names no Store
    assert found["MyStore.dispatch"] == 1
    up = names(impact(graph, subject(graph, "store.ts", "MyStore.dispatch"), 1))
    assert up == {"Store.dispatch": 1, "run": 1}
