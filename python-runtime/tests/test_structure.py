"""The package's shape: no import cycle, and the public SDK apart from the runner.

The SDK's functions reach whatever runs them only through `workflow_sdk.seam`, which sits below
both; the runner and the test kit build on the SDK, never the other way round.
"""

import ast
import os
import pickle
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGE = os.path.join(ROOT, "workflow_sdk")
# What builds on the SDK: the runner (a session's process) and the test kit.
ABOVE = ("workflow_sdk.runner", "workflow_sdk.testing")


def _modules():
    """Every module of the package, by dotted name, with its file."""
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(folder, name), ROOT)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            found[".".join(rel)] = os.path.join(folder, name)
    return found


def _imports(name, path, modules):
    """The package's modules `name` imports anywhere in its file (a lazy import counts too)."""
    package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    deps = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                deps.add(target if target in modules else base)
        elif isinstance(node, ast.Import):
            deps.update(alias.name for alias in node.names)
    return {d for d in deps if d in modules and d != name}


def import_graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph):
    """One import cycle as a list of modules (first repeated at the end), or None."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for dep in sorted(graph[node]):
            cycle = visit(dep)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


class Structure(unittest.TestCase):
    def test_no_module_imports_itself_back(self):
        self.assertIsNone(find_cycle(import_graph()))

    def test_the_cycle_finder_finds_a_cycle(self):
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
        self.assertEqual(find_cycle(graph), ["a", "b", "c", "a"])

    def test_the_public_sdk_imports_neither_the_runner_nor_the_kit(self):
        graph = import_graph()
        public = [m for m in graph if not m.startswith(ABOVE)]
        self.assertIn("workflow_sdk.api", public)
        reaching = {m: sorted(d for d in graph[m] if d.startswith(ABOVE)) for m in public}
        self.assertEqual({m: d for m, d in reaching.items() if d}, {})

    def test_importing_workflow_sdk_loads_no_runner_module(self):
        code = "import sys, workflow_sdk; print(*sorted(m for m in sys.modules if 'workflow_sdk' in m))"
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
        loaded = run.stdout.split()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("workflow_sdk.seam", loaded)
        self.assertEqual([m for m in loaded if m.startswith(ABOVE)], [])

    def test_event_mappings_pickle_under_the_name_they_always_had(self):
        from workflow_sdk.event import AttrDict, Headers

        for value in (AttrDict(a=1), Headers({"A": "b"})):
            self.assertIn(b"workflow_sdk.event", pickle.dumps(value))
            self.assertEqual(pickle.loads(pickle.dumps(value)), value)


if __name__ == "__main__":
    unittest.main()
