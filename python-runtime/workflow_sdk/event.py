"""Dict-like events: `event.data.body.text` and `event["data"]["body"]["text"]` read the same value."""

import base64
from collections.abc import Mapping

from .mappings import AttrDict, Headers
from .values import decode

__all__ = ["AttrDict", "Event", "Headers", "event_from_wire"]


class Event(AttrDict):
    """The handler's argument: `data`, `session_id`, `event_id`, `event_type`.

    Keys missing at the top level are looked up in `data`, so AutoKitteh-style `event.body.text`
    reads `event.data.body.text`.
    """

    def __missing__(self, key):
        data = dict.get(self, "data")
        if isinstance(data, Mapping) and key in data:
            return data[key]
        raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def event_from_wire(obj):
    """Build an `Event` from the service's JSON shape (body bytes arrive base64-encoded).

    An event with `"data_encoding": "sdk"` (a session made by `start()`) carries `data` in the
    SDK's wire form (values.py), decoded here, so the new session gets exactly what was passed;
    with `"json"` (a manual run's inputs) `data` is plain JSON, taken as it is.
    """
    event = dict(obj)
    encoding = event.pop("data_encoding", None)
    if encoding == "sdk":
        event["data"] = decode(event.get("data") or {})
        return Event(event)
    if encoding == "json":
        return Event(event)
    data = event.get("data")
    if isinstance(data, Mapping):
        data = dict(data)
        if isinstance(data.get("headers"), Mapping):
            data["headers"] = Headers(data["headers"])
        body = data.get("body")
        if isinstance(body, Mapping):
            body = dict(body)
            raw = body.get("bytes")
            body["bytes"] = base64.b64decode(raw) if isinstance(raw, str) else b""
            data["body"] = body
        event["data"] = data
    return Event(event)
