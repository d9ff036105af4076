"""What a session's process does before its `start` arrives, so that `start` → handler is short.

The service connects to a spare ahead of need and the spare says `hello`; `start` comes when a
session does. Until then the process has nothing to do, so it does here what needs no `start`:
it builds the session's activity hook and takes over the warm server's imported modules, and it
runs the code that reading `start` runs (JSON, the protocol's check, the event's classes) and a
handler's call and `http_outcome` once on a sample. A forked process pays a copy-on-write fault
the first time it writes a page it shares with its parent (a reference count is a write); paid
here, those faults are off the session's path. The fork server runs the same rehearsal before it
forks (`warm_server`), so the code is specialised already and the child's rehearsal is cheaper.
See docs/performance.md.
"""

import base64

from .. import api, seam
from ..event import event_from_wire
from .capture import FdCapture
from .handler import invoke
from .protocol import check_start, decode, encode
from .standby import Standby

__all__ = ["Prepared", "rehearse", "warm_server"]

_SAMPLE = {
    "type": "start",
    "session_id": "ses_ahead",
    "project_dir": "/",
    "entry": "ahead.py:ahead",
    "event": {
        "event_id": "evt_ahead",
        "session_id": "ses_ahead",
        "event_type": "post",
        "data": {
            "method": "POST",
            "raw_url": "/webhooks/ahead",
            "url": {"path": "/webhooks/ahead", "query": {"a": "1"}, "path_suffix": ""},
            "headers": {"Content-Type": "application/json", "Host": "127.0.0.1"},
            "body": {"bytes": "e30=", "text": "{}", "json": {}, "form": None},
        },
    },
    "env": {"AHEAD": "1"},
    "durable": False,
    "journal": [],
    "workflow_timeout": 10,
}


class _Outcomes:
    """`seam.current` while rehearsing: takes an `http_outcome` as a session would, sends nothing."""

    @staticmethod
    def outcome(outcome):
        body = outcome["body"]
        encode(
            {
                "type": "outcome",
                "status_code": outcome["status_code"],
                "headers": outcome["headers"],
                "body": None if body is None else base64.b64encode(body).decode(),
                "more": outcome["more"],
            }
        )


def _handler(event):
    payload = event.data.body.json
    api.http_outcome(201, json={"ok": True, "n": payload.get("n")})


def rehearse():
    """Read, check and decode a sample `start` as a session's own would be, and call a sample
    handler on it that answers with an `http_outcome` (nothing is sent or kept)."""
    msg = check_start(decode(encode(_SAMPLE)))
    event = event_from_wire(msg["event"])
    event.data.headers.get("content-type")
    current, seam.current = seam.current, _Outcomes
    try:
        invoke(_handler, event, msg["session_id"])
    finally:
        seam.current = current


# CPython specialises a function's bytecode in place after it has run a few times (3.11: 8 calls).
WARM_TIMES = 16


def warm_server():
    """In the fork server, before it forks: the same rehearsal, run until its code is specialised.

    A child that runs code its parent never ran writes to that code's pages (the interpreter's
    warm-up counters, then the specialised instructions) and pays a copy-on-write fault for each;
    code the parent has specialised is only read.
    """
    for _ in range(WARM_TIMES):
        rehearse()


class Prepared:
    """What a pre-forked child sets up before its session arrives: output capture, threads, and
    the rehearsal of `start` (above), so that a spare taken at once is as ready as one that
    has waited."""

    def __init__(self):
        self.fds = FdCapture()
        self.reader = Standby("hl-reader")
        self.watchdog = Standby("hl-watchdog")
        rehearse()
