"""The entry function: found from `<relative/path.py>:<function>`, and called as `handler(event)`, or
`handler(event, session_id)` (AutoKitteh)."""

import asyncio
import importlib
import inspect
import os

from .. import errors
from .loader import module_name

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def parse_entry(entry):
    """`(file, function)` of an entry; a path that is absolute, leaves the project or is not a .py
    file is refused."""
    entry_file, _, func_name = entry.rpartition(":")
    parts = entry_file.replace("\\", "/").split("/")
    if not entry_file.endswith(".py") or os.path.isabs(entry_file) or ".." in parts or not func_name:
        raise errors.WorkflowError(f'entry "{entry}": expected <relative/path.py>:<function>')
    return entry_file, func_name


def import_handler(entry, entry_file, func_name):
    """Imports the entry's module (through the project's import hook) and returns its function."""
    module = importlib.import_module(module_name(entry_file))
    handler = getattr(module, func_name, None)
    if not callable(handler):
        raise errors.WorkflowError(f'entry "{entry}": {entry_file} has no function {func_name!r}')
    return handler


def wants_session_id(handler):
    """'positional' when the second parameter is `session_id`, 'keyword' for a keyword-only one, else None."""
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):  # builtins and odd callables: call with the event only
        return None
    if len(params) >= 2 and params[1].name == "session_id" and params[1].kind in _POSITIONAL:
        return "positional"
    if any(p.name == "session_id" and p.kind is inspect.Parameter.KEYWORD_ONLY for p in params):
        return "keyword"
    return None


def invoke(handler, event, session_id):
    """Call the handler (an `async def` one under asyncio.run) and return its result."""
    how = wants_session_id(handler)
    if how == "positional":
        result = handler(event, session_id)
    elif how == "keyword":
        result = handler(event, session_id=session_id)
    else:
        result = handler(event)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable):
    return await awaitable
