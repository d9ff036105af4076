"""An activity's exception on its way to the journal (and to the workflow): pickled as it is;
or, when its `args` do not make it again (`class X(Exception)` whose `__init__(self, a, b)` calls
`super().__init__(a)`), rebuilt as AutoKitteh does: `X(1, None)`, each missing argument taken
from the attribute of its name, else None, still an `X` for `except X`, its `args` the call's
(so a traceback ends `main.X: (1, None)`, as Python prints it); or, when even that fails, an
ActivityError with its text. (tests/test_pickling.py)
"""

import inspect
import pickle

from ..errors import ActivityError, UnpicklableError


def pickle_error(error):
    """Pickle an activity's exception. One whose `args` do not rebuild it (an `__init__(a, b)` that
    passes only `a` on) is rebuilt as AutoKitteh does, its missing arguments None (`X(1, None)`);
    one that cannot be rebuilt either becomes ActivityError with its text."""
    try:
        data = pickle.dumps(error, pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)
        return data, error
    except Exception:
        pass
    rebuilt = _Rebuilt.of(error)
    if rebuilt is not None:
        return pickle.dumps(rebuilt, pickle.HIGHEST_PROTOCOL), rebuilt.build()
    error = ActivityError(f"{type(error).__name__}: {error}")
    return pickle.dumps(error, pickle.HIGHEST_PROTOCOL), error


class _Rebuilt:
    """How to make an exception again: its class called with its args, padded with None."""

    def __init__(self, cls, call, keywords):
        self.cls, self.call, self.keywords = cls, call, keywords

    @classmethod
    def of(cls, error):
        try:
            params = inspect.signature(type(error)).parameters.values()
        except (TypeError, ValueError):
            return None
        positional = [
            p
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        keywords = {p.name: None for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
        missing = positional[len(error.args) :]
        call = tuple(error.args) + tuple(_picklable(getattr(error, p.name, None)) for p in missing)
        rebuilt = cls(type(error), call, keywords)
        try:
            pickle.loads(pickle.dumps(rebuilt, pickle.HIGHEST_PROTOCOL))
        except Exception:
            return None
        return rebuilt

    def build(self):
        return _rebuild(self.cls, self.call, self.keywords)

    def __reduce__(self):
        return (_rebuild, (self.cls, self.call, self.keywords))


def _picklable(value):
    try:
        pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        return value
    except Exception:
        return None


def _rebuild(cls, call, keywords):
    error = cls(*call, **keywords)
    try:
        error.args = call  # what the exception shows (str, the traceback's last line), as AutoKitteh sets it
    except Exception:
        pass  # an exception class that refuses its args keeps those its __init__ gave
    # The session's error shows the call that made it again, as AutoKitteh does: `X(1, None)`.
    error.__hl_shown__ = f"{cls.__name__}({', '.join(map(repr, call))})"
    return error


def pad_args(error):
    """The handler's uncaught exception shown as AutoKitteh shows it: when its `args` are fewer
    than its `__init__`'s named parameters (`__init__(self, a, b)` passing only `a` on), each
    missing one is added, the attribute of its name or None, so `X(1, 2)` ends the session
    `X(1, None)` and its traceback `main.X: (1, None)` (AutoKitteh's `set_exception_args`,
    applied to every uncaught exception, durable or not). Others are left as they are, and so
    are the SDK's own errors (`OAuthRefreshError(connection, error)`): their text is documented."""
    if type(error).__module__.partition(".")[0] in ("workflow_sdk", "autokitteh"):
        return error
    code = getattr(getattr(type(error), "__init__", None), "__code__", None)
    if code is None:  # a built-in __init__
        return error
    names = inspect.getargs(code).args[1:]  # without self
    if len(error.args) >= len(names):
        return error
    try:
        error.args = tuple(error.args) + tuple(getattr(error, n, None) for n in names[len(error.args) :])
        error.__hl_shown__ = f"{type(error).__name__}({', '.join(map(repr, error.args))})"
    except Exception:
        pass  # an exception class that refuses its args keeps those it has
    return error


def unpicklable(name, what, err, decorated):
    fix = (
        "return or pass picklable values (plain data) from this activity"
        if decorated
        else "move this call into a function decorated with @workflow_sdk.activity "
        "(or pass a module-level function)"
    )
    return UnpicklableError(
        f"cannot pickle the {what} of activity {name}: {type(err).__name__}: {err}; {fix}"
    )
