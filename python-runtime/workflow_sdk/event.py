"""Dict-like events: `event.data.body.text` and `event["data"]["body"]["text"]` read the same value."""

import base64
from collections.abc import Mapping


def _convert(value):
    # Nested mappings become the same attribute-readable kind; lists are walked, not copied lazily,
    # so item assignment on what the handler reads changes what it reads next.
    if isinstance(value, (AttrDict, Headers)):
        return value
    if isinstance(value, Mapping):
        return AttrDict(value)
    if isinstance(value, list):
        return [_convert(v) for v in value]
    return value


class AttrDict(dict):
    """A dict whose keys are also readable as attributes; attribute assignment is refused.

    >>> e = AttrDict({"data": {"body": {"text": "hi"}}})
    >>> e.data.body.text
    'hi'
    """

    def __init__(self, *args, **kwargs):
        super().__init__()
        for key, value in dict(*args, **kwargs).items():
            dict.__setitem__(self, key, _convert(value))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute or key {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError(
            f"cannot set attribute {name!r} on {type(self).__name__}: use item assignment ([{name!r}] = ...)"
        )

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete attribute {name!r} on {type(self).__name__}")

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, _convert(value))


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


class Headers(dict):
    """HTTP headers: canonical keys (`Content-Type`), case-insensitive lookups."""

    def _find(self, name):
        if isinstance(name, str):
            lower = name.lower()
            for key in dict.keys(self):
                if isinstance(key, str) and key.lower() == lower:
                    return key
        raise KeyError(name)

    def __getitem__(self, name):
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            return dict.__getitem__(self, self._find(name))

    def __contains__(self, name):
        try:
            self[name]
            return True
        except KeyError:
            return False

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def __setitem__(self, name, value):
        try:
            name = self._find(name)
        except KeyError:
            pass
        dict.__setitem__(self, name, value)

    def __delitem__(self, name):
        try:
            dict.__delitem__(self, name)
        except KeyError:
            dict.__delitem__(self, self._find(name))


def event_from_wire(obj):
    """Build an `Event` from the service's JSON shape (body bytes arrive base64-encoded).

    An event with `"data_encoding": "sdk"` (a session made by `start()`) carries `data` in the
    SDK's wire form (values.py), decoded here, so the new session gets exactly what was passed;
    with `"json"` (a manual run's inputs) `data` is plain JSON, taken as it is.
    """
    event = dict(obj)
    encoding = event.pop("data_encoding", None)
    if encoding == "sdk":
        from .values import decode

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
