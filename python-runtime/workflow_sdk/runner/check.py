"""`check`: every .py file compiles and every call names a top-level function, without importing."""

import ast
import os


def _py_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") and not name.startswith("."):
                yield os.path.join(dirpath, name)


def _compile_error(path, rel):
    try:
        with open(path, "rb") as f:
            source = f.read()
        compile(source, rel, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"{rel}:{e.lineno or 0}: {type(e).__name__}: {e.msg}"
    except (ValueError, OSError) as e:
        return f"{rel}: {type(e).__name__}: {e}"
    return None


def _call_error(root, call):
    file, sep, func = call.rpartition(":")
    if not sep or not file or not func:
        return f'call "{call}": expected <relative/path.py>:<function>'
    parts = file.replace("\\", "/").split("/")
    if os.path.isabs(file) or ".." in parts or not file.endswith(".py"):
        return f'call "{call}": the file must be a relative .py path inside the project (no "..")'
    path = os.path.join(root, *parts)
    if not os.path.isfile(path):
        return f'call "{call}": file {file} not found'
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), file)
    except (SyntaxError, ValueError):
        return None  # reported by the compile check
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            return None
    return f'call "{call}": no top-level function "{func}" in {file}'


def check(root, calls):
    """Returns the list of error lines (empty when all is well)."""
    errors = []
    for path in _py_files(root):
        error = _compile_error(path, os.path.relpath(path, root).replace(os.sep, "/"))
        if error:
            errors.append(error)
    for call in calls:
        error = _call_error(root, call)
        if error:
            errors.append(error)
    return errors
