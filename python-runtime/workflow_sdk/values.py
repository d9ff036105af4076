"""Values on the wire: JSON, with tags for what JSON would lose.

The service keeps store values, signal payloads and `start` data in this form, so it can do
arithmetic on numbers (`add_values`) and show plain data, while Python gets back exactly what it
sent. A JSON number without a fraction is a Python `int`, one with a fraction a `float`. Tags (an
object with one `$` key):
- `{"$int": "123…"}`: an int outside ±(2**53 - 1), which a JSON number would round.
- `{"$float": "1.0" | "nan" | "inf" | "-inf"}`: a float JSON cannot tell from an int, or cannot hold.
- `{"$bytes": "<base64>"}`: bytes.
- `{"$pickle": "<base64>"}`: anything else (tuples, sets, datetimes, your classes), pickled.
A dict whose keys are not all str, or that looks like a tag, is pickled as a whole; the SDK's
`AttrDict`/`Headers` (event data) are stored as plain JSON objects.
"""

import base64
import math
import pickle

from .mappings import AttrDict, Headers

SAFE_INT = 2**53 - 1
TAGS = ("$int", "$float", "$bytes", "$pickle")


def _pickled(value):
    try:
        data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        raise TypeError(
            f"value of type {type(value).__name__} cannot be stored: {type(e).__name__}: {e}"
        ) from None
    return {"$pickle": base64.b64encode(data).decode()}


def encode(value):
    """A JSON-ready form of `value` (see the module doc).

    >>> encode(2**70)
    {'$int': '1180591620717411303424'}
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value if -SAFE_INT <= value <= SAFE_INT else {"$int": str(value)}
    if type(value) is float:
        if math.isfinite(value) and not value.is_integer():
            return value
        return {"$float": repr(value)}
    if type(value) is bytes:
        return {"$bytes": base64.b64encode(value).decode()}
    if type(value) is list:
        return [encode(v) for v in value]
    if _is_plain_dict(value) and all(isinstance(k, str) for k in value) and not _looks_tagged(value):
        return {k: encode(v) for k, v in value.items()}
    return _pickled(value)


def _is_plain_dict(value):
    # The SDK's own mappings (an event's data, its headers) are kept as JSON objects too, so a
    # stored event stays readable; other dict subclasses keep their type through pickle.
    return type(value) is dict or isinstance(value, (AttrDict, Headers))


def _looks_tagged(obj):
    return len(obj) == 1 and next(iter(obj)).startswith("$")


def decode(obj):
    """The Python value of a wire form made by `encode` (or by the service, which uses the same tags).

    >>> decode({"$float": "2.0"})
    2.0
    """
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if _looks_tagged(obj):
        tag, raw = next(iter(obj.items()))
        if tag == "$int":
            return int(raw)
        if tag == "$float":
            return float(raw)
        if tag == "$bytes":
            return base64.b64decode(raw)
        if tag == "$pickle":
            return pickle.loads(base64.b64decode(raw))
    return {k: decode(v) for k, v in obj.items()}
