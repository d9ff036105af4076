"""The seam between the SDK and whatever runs it: this process's running session, and per-thread flags.

It sits below both sides and imports neither: the SDK's functions (`api`, `inline`, `service`,
`store`) read `current`; the runner (`runner/process.py`) sets it to its `Session` in a
session process, `workflow_sdk.testing` to its backend in a test; None elsewhere. The SDK reaches
it only through these members (a duck-typed protocol):

- `in_workflow()` → bool: the caller is workflow code (the workflow thread, not importing);
- `in_activity()` → bool: the caller runs inside an activity;
- `activities.run(fn, name, args, kwargs, is_async=False, decorated=False)`: one activity;
- `outcome({"status_code", "headers", "body", "more"})`: one validated `http_outcome`;
- `subscribe(name, filter)` → id, `next_event(ids, timeout)` → Event or None, `unsubscribe(id)`;
- `call_service(kind, fields)` → the reply's value: a request the service answers (store,
  start_session, signal, next_signal, outcome_value, webhook_url; see python-runtime/README.md);
- `store` (optional attribute): a mutable mapping, see `store()`.

>>> from workflow_sdk import seam
>>> seam.current is None   # outside a session
True
"""

import threading

current = None  # the runner's Session, set once per child process (or a test backend)
_local = threading.local()


def in_activity_thread():
    return getattr(_local, "activity", False)


def mark_activity_thread():
    _local.activity = True


def store():
    """The current session's key-value store, or None when it has none.

    The runner's sessions have none here (their store is the service's, reached with
    `call_service("store", …)`); `workflow_sdk.testing`'s backend has the dict given as `store=`.

    >>> store() is None   # outside a session
    True
    """
    return getattr(current, "store", None)
