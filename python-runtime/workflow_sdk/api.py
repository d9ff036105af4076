"""The functions handlers call: activity, http_outcome, subscribe, next_event, unsubscribe."""

import datetime
import functools
import inspect
import json as _json
import sys

from . import seam
from .errors import ActivityCallError, WorkflowError
from .retry import RetryPolicy


def activity(fn=None, *, retry=None):
    """Run the whole function as one activity (sync or `async def`).

    `retry`: a `RetryPolicy` for its failed attempts (without one, the trigger's `retry:` applies;
    with neither, an exception reaches the caller at once).

    >>> @activity
    ... def fetch(url): ...
    >>> @activity(retry=RetryPolicy(max_attempts=5))
    ... def charge(order): ...
    """
    if retry is not None and not isinstance(retry, RetryPolicy):
        raise TypeError(f"@workflow_sdk.activity: retry must be a workflow_sdk.RetryPolicy, got {retry!r}")
    if fn is None:
        return lambda f: _activity(f, retry)
    return _activity(fn, retry)


def _activity(fn, retry):
    if isinstance(fn, (staticmethod, classmethod)):
        raise TypeError("@workflow_sdk.activity must be applied below @staticmethod/@classmethod")
    if not callable(fn):
        raise TypeError(f"@workflow_sdk.activity expects a function, got {type(fn).__name__}")
    name = (
        f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', None) or type(fn).__name__}"
    )
    is_async = inspect.iscoroutinefunction(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        session = seam.current
        if session is None or not session.in_workflow():
            return fn(*args, **kwargs)
        return session.activities.run(fn, name, args, kwargs, is_async=is_async, decorated=True, retry=retry)

    wrapper.__hl_activity__ = True
    return wrapper


# An HTTP header name is a token (RFC 9110); a value holds no control characters but tab.
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _check_header(name, value):
    if not isinstance(name, str) or not isinstance(value, str):
        raise ValueError(f"http_outcome: header {name!r} must map a str to a str, got {type(value).__name__}")
    if not name or any(c not in _TOKEN_CHARS for c in name):
        raise ValueError(
            f"http_outcome: header name {name!r} is empty or not an HTTP token "
            "(it holds CR, LF, ':', a space or other)"
        )
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
        raise ValueError(
            f"http_outcome: header {name!r} has a value holding CR, LF or another control character"
        )
    if any(ord(c) > 255 for c in value):
        raise ValueError(f"http_outcome: header {name!r} has a value with characters outside Latin-1")


def http_outcome(status_code=200, headers=None, body=None, more=False, *, json=None, event_id=None):
    """Send an HTTP outcome; the first with `more=False` answers a synchronous webhook.

    `event_id` (AutoKitteh) names the event whose request this answers; None means the event
    that started the session.

    >>> http_outcome(201, {"Location": "/items/1"}, json={"id": 1})
    """
    if event_id is not None and (not isinstance(event_id, str) or not event_id):
        raise ValueError(f"http_outcome: event_id must be an event id string, got {event_id!r}")
    if isinstance(headers, (str, bytes, bytearray)):
        if body is not None:
            raise ValueError(
                "http_outcome: body given twice (a str/bytes in the headers position is the body)"
            )
        headers, body = None, headers
    if isinstance(status_code, bool) or not isinstance(status_code, int) or not 100 <= status_code <= 599:
        raise ValueError(f"http_outcome: status_code must be an int in 100-599, got {status_code!r}")
    if body is not None and json is not None:
        raise ValueError("http_outcome: pass body or json, not both")
    if headers is None:
        headers = {}
    if not hasattr(headers, "items"):
        raise ValueError("http_outcome: headers must be a dict of str to str")
    headers = dict(headers.items())
    for name, value in headers.items():
        _check_header(name, value)
    if isinstance(body, (dict, list)):
        json, body = body, None
    if json is not None:
        body = _json.dumps(json, separators=(",", ":")).encode()
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
    elif isinstance(body, str):
        body = body.encode()
    elif isinstance(body, (bytes, bytearray, memoryview)):
        body = bytes(body)
    elif body is not None:
        raise ValueError(f"http_outcome: body must be str or bytes, got {type(body).__name__}")
    outcome = {"status_code": status_code, "headers": headers, "body": body, "more": bool(more)}
    if event_id is not None:
        outcome["event_id"] = event_id
    session = seam.current
    if session is None:
        shown = body.decode(errors="replace") if body is not None else ""
        print(f"http_outcome: {status_code} {headers} {shown}{' (more)' if more else ''}", file=sys.stderr)
        return None
    session.outcome(outcome)
    return None


def _session_for(op):
    """The running session for an SDK call that talks to the service; refused inside activities."""
    session = seam.current
    if (session is not None and session.in_activity()) or seam.in_activity_thread():
        raise ActivityCallError(op)
    if session is None:
        raise WorkflowError(f"workflow_sdk.{op}() needs a running Hookline session")
    return session


def subscribe(name, filter=""):
    """Subscribe to events of a trigger of this project; returns a subscription id."""
    session = _session_for("subscribe")
    if not isinstance(name, str) or not name:
        raise ValueError("subscribe: name must be a non-empty trigger name")
    if filter is None:
        filter = ""
    if not isinstance(filter, str):
        raise ValueError("subscribe: filter must be a string")
    return session.subscribe(name, filter)


def next_event(id_or_ids, *, timeout=None, full=False):
    """The next event of any of the subscriptions, or None once `timeout` elapses (0: don't wait).

    The event answers both forms whatever `full` says: `e.event_id`, `e.data.body` (the full
    event, AutoKitteh's `full=True`) and `e.body` (its data, AutoKitteh's default).
    """
    if not isinstance(full, bool):
        raise ValueError("next_event: full must be a boolean")
    session = _session_for("next_event")
    ids = [id_or_ids] if isinstance(id_or_ids, str) else list(id_or_ids)
    if not ids or not all(isinstance(i, str) and i for i in ids):
        raise ValueError("next_event: expects a subscription id or a list of them")
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError("next_event: timeout must be a timedelta or a number of seconds >= 0")
        timeout = float(timeout)
    return session.next_event(ids, timeout)


def unsubscribe(id):
    """End one subscription (all end with the session)."""
    session = _session_for("unsubscribe")
    if not isinstance(id, str) or not id:
        raise ValueError("unsubscribe: expects a subscription id")
    session.unsubscribe(id)
