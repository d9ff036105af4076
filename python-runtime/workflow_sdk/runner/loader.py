"""Import hook: modules whose files are inside the project get their calls rewritten.

Every call inside a function body (lambdas and comprehensions in it included) becomes
`_hl_call(f, *args, **kw)`; `_hl_call` decides at run time whether the call is an activity.
Module level, class bodies, decorators, defaults and annotations run as written.
"""

import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys

CALL_NAME = "_hl_call"
# These look at the frame that calls them, so a wrapper frame in between would change their answer.
FRAME_NAMES = frozenset({"super", "locals", "vars", "globals", "dir", "eval", "exec", "breakpoint"})
FRAME_ATTRS = frozenset({"_getframe", "currentframe"})


class CallRewriter(ast.NodeTransformer):
    def __init__(self):
        self._in_function = False

    def _body(self, node, fields):
        outer, self._in_function = self._in_function, True
        for field in fields:
            value = getattr(node, field)
            if isinstance(value, list):
                setattr(node, field, [n for n in (self.visit(v) for v in value) if n is not None])
            else:
                setattr(node, field, self.visit(value))
        self._in_function = outer
        return node

    # Decorators, defaults and annotations are evaluated where the def stands: leave them alone.
    def visit_FunctionDef(self, node):
        return self._body(node, ["body"])

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return self._body(node, ["body"])

    def visit_ClassDef(self, node):
        outer, self._in_function = self._in_function, False
        node.body = [n for n in (self.visit(v) for v in node.body) if n is not None]
        self._in_function = outer
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if not self._in_function or _reads_caller_frame(node.func):
            return node
        call = ast.Call(
            func=ast.Name(id=CALL_NAME, ctx=ast.Load()),
            args=[node.func, *node.args],
            keywords=node.keywords,
        )
        return ast.copy_location(call, node)


def _reads_caller_frame(func):
    if isinstance(func, ast.Name):
        return func.id in FRAME_NAMES or func.id == CALL_NAME
    return isinstance(func, ast.Attribute) and func.attr in FRAME_ATTRS


def rewrite(source, filename="<project>"):
    """Parse and rewrite source; returns a code object ready to exec."""
    tree = ast.parse(source, filename)
    tree = ast.fix_missing_locations(CallRewriter().visit(tree))
    return compile(tree, filename, "exec", dont_inherit=True)


# Bump when the rewrite changes, so cached code from an older rewriter is not used.
REWRITE_VERSION = "1"
CACHE_DIR = "__hookline_cache__"
# Code already loaded in this process, by file and its size and time: a process whose sessions
# import the project anew (fresh modules, reuse.py) runs it again without reading it again.
# Bounded: past it, the oldest goes.
_CODE = {}
MAX_CODE = 512


def _cache_path(path, source):
    key = hashlib.sha256(source + f"|{REWRITE_VERSION}|{sys.version}|{path}".encode()).hexdigest()[:32]
    return os.path.join(os.path.dirname(path), CACHE_DIR, f"{os.path.basename(path)}.{key}.bin")


def _write_cache(cache, code):
    """Best effort (a read-only project just compiles every time); atomic, so readers never see half."""
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump(code, f)
        os.replace(tmp, cache)
    except OSError:
        pass


class HookLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname, path, hook):
        super().__init__(fullname, path)
        self._hook = hook

    # Never a .pyc beside the source: it would be either unrewritten or leak the rewrite. The
    # rewritten code is cached in a folder of its own, keyed by the source and the rewriter.
    def get_code(self, fullname):
        st = os.stat(self.path)
        key = (self.path, st.st_mtime_ns, st.st_size)
        code = _CODE.get(key)
        if code is None:
            code = _CODE[key] = self._read_code()
            if len(_CODE) > MAX_CODE:
                del _CODE[next(iter(_CODE))]
        return code

    def _read_code(self):
        source = self.get_data(self.path)
        cache = _cache_path(self.path, source)
        try:
            with open(cache, "rb") as f:
                return marshal.load(f)
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = rewrite(source, self.path)
        _write_cache(cache, code)
        return code

    def exec_module(self, module):
        module.__dict__[CALL_NAME] = self._hook.call
        self._hook.modules.add(module.__name__)
        with self._hook.importing():
            super().exec_module(module)


class ProjectFinder(importlib.abc.MetaPathFinder):
    """Finds modules as the path finder does, and hooks the ones whose file is under `root`."""

    def __init__(self, root, hook):
        self.root = os.path.realpath(root)
        self._prefix = self.root + os.sep
        self._hook = hook
        self._contains = {}  # filename -> bool: realpath walks every folder of the name (lstat each)

    def contains(self, filename):
        if not filename:
            return False
        inside = self._contains.get(filename)
        if inside is None:
            if len(self._contains) >= MAX_CODE * 8:
                self._contains.clear()
            inside = self._contains[filename] = os.path.realpath(filename).startswith(self._prefix)
        return inside

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        if not self.contains(spec.origin) or "site-packages" in spec.origin.split(os.sep):
            return spec
        return importlib.util.spec_from_file_location(
            fullname,
            spec.origin,
            loader=HookLoader(fullname, spec.origin, self._hook),
            submodule_search_locations=spec.submodule_search_locations,
        )


def module_name(entry_file):
    """`handlers.py` → `handlers`; `pkg/mod.py` → `pkg.mod`; `pkg/__init__.py` → `pkg`."""
    parts = entry_file[:-3].replace(os.sep, "/").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)
