"""Python functions over 60 lines, the STYLE rule (the TypeScript's is 80): `npm run lint:py` runs it.

Counts a function's non-blank lines from its `def` to its end, docstring and comments included,
as the repository's before-stop hook does. Arguments: folders or files; prints `path:line name (lines)`
for each one over the limit and exits 1 when there is any.
"""

import ast
import os
import sys

LIMIT = 60


def _files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            yield from (os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))


def too_long(source, limit=LIMIT):
    """(line, name, lines) of each function in `source` longer than `limit` non-blank lines.

    >>> too_long("def f():\\n" + "    x = 1\\n" * 60)
    [(1, 'f', 61)]
    """
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = sum(1 for line in lines[node.lineno - 1 : node.end_lineno] if line.strip())
            if n > limit:
                found.append((node.lineno, node.name, n))
    return found


def main(paths):
    bad = 0
    for path in _files(paths):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        try:
            found = too_long(source)
        except SyntaxError:
            continue  # ruff reports it
        for line, name, n in found:
            print(f"{path}:{line} {name} ({n} lines, over {LIMIT})")
            bad += 1
    if bad:
        print(f"{bad} Python function(s) over {LIMIT} lines: split them where their jobs part (STYLE.md)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
