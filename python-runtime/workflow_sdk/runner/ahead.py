"""What a session's process does before its `start` arrives, so that `start` → handler is short.

The service connects to a spare ahead of need and the spare says `hello`; `start` comes when a
session does. Until then the process has nothing to do, so it does here what needs no `start`:
it builds the session's activity hook and takes over the warm server's imported modules, and it
runs the code that reading `start` runs (JSON, the protocol's check, the event's classes) once
on a sample. A forked process pays a copy-on-write fault the first time it writes a page it
shares with its parent (a reference count is a write); paid here, those faults are off the
session's path. See docs/performance.md.
"""

from ..event import event_from_wire
from .protocol import check_start, decode, encode

__all__ = ["rehearse"]

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


def rehearse():
    """Read, check and decode a sample `start` as a session's own would be (nothing is kept)."""
    msg = check_start(decode(encode(_SAMPLE)))
    event = event_from_wire(msg["event"])
    _ = event.data.body.json
    event.data.headers.get("content-type")
    encode({"type": "outcome", "status_code": 200, "headers": {}, "body": "e30=", "more": False})
