"""Running calls inline instead of as activities: `inhibit_activities` and `register_no_activity`.

Inline calls run on the workflow thread, are not reported as activities and, in a durable
session, are not journaled: a replay runs them again. Use them for deterministic work that must
happen on every run (building a client from a token, parsing), never for side effects.
"""

import contextlib
import functools
import types

from . import seam

_registered = set()


def _hashable(obj):
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def register_no_activity(fn_or_class):
    """Never run these as activities: a function, a class (its constructor and methods), or an
    iterable of them.

    >>> register_no_activity(yaml.safe_load)
    >>> register_no_activity([MyClient, helpers.parse])
    """
    items = fn_or_class if not callable(fn_or_class) and hasattr(fn_or_class, "__iter__") else [fn_or_class]
    items = list(items)
    for item in items:
        if not callable(item) or not _hashable(item):
            raise TypeError(f"register_no_activity expects hashable functions or classes, got {item!r}")
    _registered.update(items)
    session = seam.current
    if session is not None and session.activities is not None:
        session.activities.forget()


def no_activity(f):
    """True when `f` (or the function, class or owner class behind it) was registered."""
    if not _registered:
        return False
    target = f.__func__ if isinstance(f, types.MethodType) else f
    if _hashable(target) and target in _registered:
        return True
    owner = getattr(f, "__self__", None)
    cls = owner if isinstance(owner, type) else type(owner) if owner is not None else None
    if isinstance(f, type):
        cls = f
    elif cls is None:
        cls = getattr(f, "__objclass__", None)
    return cls is not None and any(c in _registered for c in getattr(cls, "__mro__", ()))


@contextlib.contextmanager
def _inline():
    session = seam.current
    acts = session.activities if session is not None else None
    if acts is None:
        yield
        return
    acts.inline += 1
    try:
        yield
    finally:
        acts.inline -= 1


def inhibit_activities(fn=None):
    """Run calls inline, not as activities: `with inhibit_activities(): ...`, or as a decorator.

    >>> with inhibit_activities():
    ...     client = SomeClient(token)
    """
    if fn is None:
        return _inline()
    if not callable(fn):
        raise TypeError(f"inhibit_activities expects a function, got {type(fn).__name__}")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _inline():
            return fn(*args, **kwargs)

    return wrapper
