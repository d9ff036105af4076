"""Google Calendar and Drive events as a handler gets them (docs/connections.md).

The service reads what changed when a watch channel's notification comes and makes one event of
each changed Calendar event (`event_created` at sequence 0, `event_deleted` when cancelled,
else `event_updated`) and of each Drive change (`file_remove` when removed, else
`file_change`); `data` is Google's resource with its field names snake_cased, as AutoKitteh's Go
structs name them, the keys of the user's own maps kept, and the main fields Google left out at
their zero value. These builders make the same events from the resources as Google's API sends
them (camelCase JSON).

>>> e = google_calendar_events([{"id": "e1", "status": "confirmed", "sequence": 0,
...                              "start": {"dateTime": "2026-12-07T09:00:00Z"}}])[0]
>>> e.event_type, e.data.start.date_time, e.data.summary
('event_created', '2026-12-07T09:00:00Z', '')
>>> f = google_drive_events([{"fileId": "f1", "file": {"name": "notes.txt"}}])[0]
>>> f.event_type, f.data.file_id, f.data.file.name
('file_change', 'f1', 'notes.txt')

Gmail and Forms changes come through Cloud Pub/Sub: one `mailbox_change` per push with the
mailbox's history records read since the last one, and one `responses` (the form's latest
response) or `schema` (the form) per Forms push, as AutoKitteh names them.

>>> m = gmail_event("ada@example.com", 101, [{"id": "101", "messagesAdded": []}])
>>> m.event_type, m.data.email_address, m.data.history_id, m.data.history[0].messages_added
('mailbox_change', 'ada@example.com', 101, [])
>>> r = google_forms_event("RESPONSES", "form1", responses=[{"responseId": "r1"}])
>>> r.event_type, r.data.form_id, r.data.response.response_id
('responses', 'form1', 'r1')
"""

import copy
import re
from collections.abc import Mapping

from ..event import event_from_wire
from .events import new_id

__all__ = [
    "gmail_event",
    "google_calendar_events",
    "google_drive_events",
    "google_forms_event",
]

# Fields whose values are maps of the user's own keys: their keys stay as they are.
_MAP_FIELDS = {
    *("private", "shared", "preferences", "parameters"),
    *("appProperties", "properties", "exportLinks"),
    "answers",  # a Forms response's answers, by question id
}
_EVENT_ZEROS = {
    "id": "",
    "status": "",
    "summary": "",
    "description": "",
    "location": "",
    "html_link": "",
    "created": "",
    "updated": "",
    "sequence": 0,
    "event_type": "",
    "recurring_event_id": "",
    "start": None,
    "end": None,
    "creator": None,
    "organizer": None,
    "attendees": [],
}
_CHANGE_ZEROS = {
    "change_type": "",
    "drive_id": "",
    "file_id": "",
    "kind": "",
    "removed": False,
    "time": "",
    "file": None,
    "drive": None,
}


def _snake_name(name):
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name).lower()


def _snake_keys(value, keep_keys=False):
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    if not isinstance(value, Mapping):
        return copy.deepcopy(value)
    return {
        (k if keep_keys else _snake_name(k)): _snake_keys(v, not keep_keys and k in _MAP_FIELDS)
        for k, v in value.items()
    }


def _wire(event_type, data, event_id, session_id):
    wire = {"event_id": event_id or new_id("evt"), "session_id": session_id}
    return event_from_wire({**wire, "event_type": event_type, "data": data})


def _resources(items, what):
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise TypeError(f"{what}: give a list of dicts (the resources as Google's API sends them)")
    return items


def google_calendar_events(items, *, session_id=None):
    """The events of changed Calendar events (the `items` of `events.list`), one each."""
    out = []
    for item in _resources(items, "google_calendar_events"):
        if item.get("status") == "cancelled":
            kind = "event_deleted"
        elif int(item.get("sequence") or 0) == 0:
            kind = "event_created"
        else:
            kind = "event_updated"
        out.append(_wire(kind, {**_EVENT_ZEROS, **_snake_keys(item)}, None, session_id))
    return out


def google_drive_events(changes, *, session_id=None):
    """The events of Drive changes (the `changes` of `changes.list`), one each."""
    out = []
    for change in _resources(changes, "google_drive_events"):
        kind = "file_remove" if change.get("removed") is True else "file_change"
        out.append(_wire(kind, {**_CHANGE_ZEROS, **_snake_keys(change)}, None, session_id))
    return out


def gmail_event(email_address, history_id, history=(), *, publish_time="", session_id=None):
    """A Gmail push's `mailbox_change`: the history records (`users.history.list`) read for it."""
    records = _resources(list(history), "gmail_event")
    data = {
        "publish_time": publish_time,
        "email_address": email_address,
        "history_id": int(history_id),
        "history": _snake_keys(records),
    }
    return _wire("mailbox_change", data, None, session_id)


def _latest(responses):
    latest = {}
    for r in responses:
        if not latest or str(r.get("lastSubmittedTime", "")) > str(latest.get("lastSubmittedTime", "")):
            latest = r
    return latest


def google_forms_event(event_type, form_id, *, responses=(), form=None, publish_time="", session_id=None):
    """A Forms push's event: `responses` with the latest of `responses`, `schema` with `form`."""
    kind = str(event_type).upper()
    data = {"event_type": kind, "form_id": form_id, "publish_time": publish_time}
    if kind == "SCHEMA":
        data["form"] = _snake_keys(dict(form or {}))
    else:
        items = _resources(list(responses), "google_forms_event")
        data["response"] = _snake_keys(_latest(items))
    return _wire(kind.lower(), data, None, session_id)
