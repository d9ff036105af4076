"""The SDK's mappings: `AttrDict` (keys readable as attributes) and `Headers` (case-insensitive).

They import nothing of the SDK, so both `event` (the handler's `Event` is an `AttrDict`) and
`values` (which stores them as plain JSON objects) build on them without importing each other.
Their `__module__` stays `workflow_sdk.event`, where they were first defined and are still
exported: what a journal or store pickled before keeps unpickling, and pickles written now name
the same place.
"""

from collections.abc import Mapping

__all__ = ["AttrDict", "Headers"]


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

    __module__ = "workflow_sdk.event"

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


class Headers(dict):
    """HTTP headers: canonical keys (`Content-Type`), case-insensitive lookups."""

    __module__ = "workflow_sdk.event"

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
