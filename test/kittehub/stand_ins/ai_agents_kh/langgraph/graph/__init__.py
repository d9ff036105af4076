"""Stand-in `langgraph.graph`: a state graph run step by step (each step runs the nodes the
previous step's edges lead to; `END` is no node), its state merged with each key's reducer."""

from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints

START = "__start__"
END = "__end__"


def _reducers(state_schema) -> dict[str, Callable | None]:
    hints = get_type_hints(state_schema, include_extras=True)
    out = {}
    for key, hint in hints.items():
        meta = get_args(hint)[1:] if get_origin(hint) is Annotated else ()
        out[key] = next((m for m in meta if callable(m)), None)
    return out


def _run_node(node, state):
    return node.invoke(state) if hasattr(node, "invoke") else node(state)


class CompiledStateGraph:
    def __init__(self, builder: "StateGraph"):
        self.builder = builder

    def _merge(self, state: dict, update: dict | None) -> dict:
        state = dict(state)
        for key, value in (update or {}).items():
            reducer = self.builder.reducers.get(key)
            state[key] = reducer(state.get(key, []), value) if reducer else value
        return state

    def _next(self, name: str, state: dict) -> list[str]:
        targets = list(self.builder.edges.get(name, []))
        for path, path_map in self.builder.branches.get(name, []):
            picked = path(state)
            for p in picked if isinstance(picked, list) else [picked]:
                targets.append(path_map[p] if path_map else p)
        return list(dict.fromkeys(t for t in targets if t != END))

    def invoke(self, input: dict, config: Any = None, recursion_limit: int = 25) -> dict:
        state = self._merge({}, input)
        current = self._next(START, state)
        for _ in range(recursion_limit):
            if not current:
                return state
            updates = [(n, _run_node(self.builder.nodes[n], state)) for n in current]
            for _, update in updates:
                state = self._merge(state, update)
            current = list(dict.fromkeys(t for n, _ in updates for t in self._next(n, state)))
        raise RuntimeError(f"Recursion limit of {recursion_limit} reached")


class StateGraph:
    def __init__(self, state_schema):
        self.reducers = _reducers(state_schema)
        self.nodes: dict[str, Any] = {}
        self.edges: dict[str, list[str]] = {}
        self.branches: dict[str, list] = {}

    def add_node(self, name, action=None):
        if action is None:
            name, action = name.__name__, name
        self.nodes[name] = action
        return self

    def add_edge(self, start: str, end: str):
        self.edges.setdefault(start, []).append(end)
        return self

    def add_conditional_edges(self, source: str, path: Callable, path_map: dict | list | None = None):
        if isinstance(path_map, list):
            path_map = {p: p for p in path_map}
        self.branches.setdefault(source, []).append((path, path_map))
        return self

    def compile(self, **kwargs) -> CompiledStateGraph:
        return CompiledStateGraph(self)
