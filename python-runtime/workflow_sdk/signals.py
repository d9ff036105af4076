"""Sessions talking to sessions: `start` a new one, `signal` one, wait with `next_signal`."""

import dataclasses
import datetime
import re
from typing import Any

from . import values
from .service import call

_LOC = re.compile(r"^[^:]+\.py:[A-Za-z_][A-Za-z0-9_]*$")


@dataclasses.dataclass
class Signal:
    """A signal received by `next_signal`."""

    name: str
    payload: Any = None


def start(loc, data=None, memo=None, project=""):
    """Start a session of this project (or of `project`) at `loc` (`file.py:function`); its id.

    `data` becomes the new session's `event.data`; `memo` is a dict of strings kept on its record.

    >>> start("jobs.py:on_job", {"job": 7})
    'ses_…'
    """
    if not isinstance(loc, str) or not _LOC.match(loc):
        raise ValueError(f"start: loc must be <file.py>:<function>, got {loc!r}")
    if data is not None and not isinstance(data, dict):
        raise ValueError(f"start: data must be a dict, got {type(data).__name__}")
    memo = memo or {}
    if not isinstance(memo, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in memo.items()
    ):
        raise ValueError("start: memo must be a dict of strings to strings")
    if not isinstance(project, str):
        raise ValueError("start: project must be a project name (a string)")
    fields = {"loc": loc, "data": values.encode(data or {}), "memo": memo, "project": project}
    return call("start", "start_session", fields)


def signal(session_id, name, payload=None):
    """Send signal `name` with `payload` to a session; it waits for it with `next_signal`.

    >>> signal(other_session, "approved", {"by": "dana"})
    """
    if not isinstance(session_id, str) or not session_id.startswith("ses_"):
        raise ValueError(f"signal: session_id must be a session id (ses_…), got {session_id!r}")
    if not isinstance(name, str) or not name:
        raise ValueError("signal: name must be a non-empty string")
    call("signal", "signal", {"session_id": session_id, "name": name, "payload": values.encode(payload)})


def next_signal(name_or_names, *, timeout=None):
    """The next signal to this session with one of the names, or None once `timeout` elapses.

    `timeout` is a timedelta or seconds; None waits without end; 0 does not wait. Signals sent
    before the first `next_signal` for their name are kept for it.

    >>> sig = next_signal(["approved", "rejected"], timeout=3600)
    """
    names = [name_or_names] if isinstance(name_or_names, str) else list(name_or_names)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("next_signal: expects a signal name or a list of them")
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError("next_signal: timeout must be a timedelta or a number of seconds >= 0")
        timeout = float(timeout)
    got = call("next_signal", "next_signal", {"names": names, "timeout": timeout})
    if got is None:
        return None
    return Signal(got["name"], values.decode(got.get("payload")))
