"""`event(...)`: the `workflow_sdk.Event` the service would hand a handler for one request.

The fields are built the way the service builds them (`src/events/data.ts`), then turned into
an `Event` by the SDK's own `event_from_wire`, exactly as the runner does.

>>> e = event("POST", "/orders/7?dry=1", headers={"x-kind": "a"}, json={"n": 1})
>>> e.data.url.path_suffix, e.data.url.query, e.data.headers["X-KIND"], e.data.body.json
('orders/7', {'dry': '1'}, 'a', {'n': 1})
>>> e.event_type, e.data.headers["Content-Type"]
('post', 'application/json')
"""

import base64
import json as _json
import math
import os
import time
from collections.abc import Mapping
from decimal import Decimal
from urllib.parse import parse_qsl, quote, urlencode

from ..event import event_from_wire

__all__ = ["WEBHOOK_ID", "event", "new_id", "to_wire"]

WEBHOOK_ID = "0000000000000000000000test"  # 26 characters, like a real webhook id
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# What a WHATWG URL parser percent-encodes in a path and in a query (besides non-ASCII).
_PATH_SAFE = "!$&'()*+,-./:;=@[]\\^_|~%"
_QUERY_SAFE = "!$&()*+,-./:;=?@[]\\^_`{|}~%"


def new_id(prefix):
    """An id shaped like the service's: `evt_` + 10 characters of time + 16 random ones.

    >>> len(new_id("evt")), new_id("ses")[:4]
    (30, 'ses_')
    """
    value = int(time.time() * 1000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def _canonical(name):
    """`x-hub-signature-256` → `X-Hub-Signature-256`, as the service writes header names."""
    return "-".join(part[:1].upper() + part[1:] for part in name.lower().split("-"))


def _join_repeats(pairs, key=lambda k: k):
    out = {}
    for k, v in pairs:
        name = key(k)
        out[name] = f"{out[name]}, {v}" if name in out else v
    return out


def _header_pairs(headers):
    if headers is None:
        return []
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    out = []
    for pair in pairs:
        name, value = pair
        if not isinstance(name, str) or not name or not set(name) <= _TOKEN:
            raise ValueError(f"event: header name {name!r} is not a valid HTTP header name")
        if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
            raise ValueError(f"event: header {name!r} must be a str without CR, LF or NUL")
        out.append((name.lower(), value.strip(" \t")))
    # A fetch `Headers` lists names sorted, repeats of one name together in the order sent.
    out.sort(key=lambda p: p[0])
    return out


def _query_pairs(query):
    if query is None:
        return ""
    if isinstance(query, str):
        return query.lstrip("?")
    items = query.items() if isinstance(query, Mapping) else query
    pairs = []
    for name, value in items:
        for v in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((str(name), str(v)))
    return urlencode(pairs)


def _js_numbers(value):
    """What a JSON value looks like after the service's JSON.parse and JSON.stringify.

    Numbers are doubles there: 1.0 arrives as 1, a huge integer loses its low digits, and a
    number too big for a double arrives as null.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 1e21:
            return int(Decimal(repr(value)))
        return value
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    return value


def _refuse(name):
    raise ValueError(f"{name} is not JSON")


def _parse_json(text):
    if text is None or not text.strip():
        return None
    try:
        value = _json.loads(text, parse_int=float, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None
    return _js_numbers(value)


def _decode(body):
    try:
        return body.decode("utf-8-sig")  # a leading BOM is dropped, as TextDecoder does
    except UnicodeDecodeError:
        return None


def _body_bytes(body, json):
    if json is not None:
        if body not in (None, b"", ""):
            raise ValueError("event: pass body or json, not both")
        return _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode()
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise ValueError(f"event: body must be str or bytes, got {type(body).__name__}")


def _split_path(path, root, address_id):
    """The request's path under `<root>/<address_id>` (a path under `<root>/` is taken whole),
    that prefix, and the query."""
    path, _, _fragment = path.partition("#")
    path, sep, search = path.partition("?")
    if not path.startswith(f"{root}/"):
        if path and not path.startswith("/"):
            raise ValueError(f'event: path {path!r} must start with "/" (or be "")')
        path = f"{root}/{address_id}{path}"
    path = quote(path, safe=_PATH_SAFE)
    prefix = "/".join(path.split("/")[:3])  # <root>/<id>
    return path, prefix, quote(search, safe=_QUERY_SAFE) if sep else ""


def event(
    method="POST",
    path="",
    headers=None,
    body=b"",
    json=None,
    query=None,
    *,
    webhook_id=WEBHOOK_ID,
    event_id=None,
    session_id=None,
    _root="/webhooks",
):
    """One webhook request as the handler's `Event`.

    - `path`: below the webhook URL (`"/orders/7"` → `data.url.path_suffix == "orders/7"`, without
      the leading slash; `""`, the default, is the webhook URL itself), or a full
      `/webhooks/<id>/…` path; it may carry `?query`.
    - `headers`: a dict, or a list of `(name, value)` pairs to send a name twice.
    - `body`: str or bytes; or `json=`: any JSON value, sent compact with
      `Content-Type: application/json` unless `headers` names one.
    - `query`: a dict (a list value repeats the name), pairs, or a query string; added after a
      query in `path`.
    - `event_id` defaults to a new `evt_…`; `session_id` to None (`run` fills in the session's).
    - `_root` is the kit's own: `http_event` builds the same request under `/inbound/<id>`.

    >>> e = event("GET", query={"tag": ["a", "b"]}, headers=[("X-Tag", "1"), ("x-tag", "2")])
    >>> e.data.url.query["tag"], e.data.headers["x-tag"], e.data.raw_url.endswith("?tag=a&tag=b")
    ('a, b', '1, 2', True)
    """
    if not isinstance(method, str) or not method or not set(method) <= _TOKEN:
        raise ValueError(f"event: method {method!r} is not an HTTP method")
    raw = _body_bytes(body, json)
    if raw and method.upper() in ("GET", "HEAD"):
        raise ValueError(f"event: a {method.upper()} request has no body (the service does not read one)")
    pairs = _header_pairs(headers)
    if json is not None and not any(name == "content-type" for name, _ in pairs):
        pairs = sorted(pairs + [("content-type", "application/json")], key=lambda p: p[0])
    header_map = _join_repeats(pairs, _canonical)
    url_path, prefix, search = _split_path(path, _root, webhook_id)
    extra = _query_pairs(query)
    search = "&".join(s for s in (search, extra) if s)
    data = {
        "method": method.upper(),
        "raw_url": url_path + (f"?{search}" if search else ""),
        "url": {
            "path": url_path,
            "query": _join_repeats(parse_qsl(search, keep_blank_values=True, errors="replace")),
            "path_suffix": url_path[len(prefix) :].removeprefix("/"),
        },
        "headers": header_map,
        "body": _body(raw, header_map),
    }
    wire = {
        "event_id": event_id or new_id("evt"),
        "session_id": session_id,
        "event_type": method.lower(),
        "data": data,
    }
    return event_from_wire(wire)


def _body(raw, header_map):
    """`data.body` of a request with body `raw`, as the service reads it (form by Content-Type)."""
    text = _decode(raw)
    media = header_map.get("Content-Type", "").split(";")[0].strip().lower()
    form = None
    if media == "application/x-www-form-urlencoded" and text is not None:
        form = _join_repeats(parse_qsl(text.removeprefix("?"), keep_blank_values=True, errors="replace"))
    return {"bytes": base64.b64encode(raw).decode(), "text": text, "json": _parse_json(text), "form": form}


def to_wire(e):
    """The service's JSON shape of an event (body bytes base64), e.g. to copy one.

    >>> to_wire(event(body="hi"))["data"]["body"]["bytes"]
    'aGk='
    """
    wire = _json.loads(_json.dumps(e, default=_bytes_to_b64))
    return wire


def _bytes_to_b64(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    raise TypeError(f"an event holds a {type(value).__name__}, which is not JSON")


def start_event(data=None, *, session_id=None):
    """The event of a session made by `start(loc, data)`: the handler's `event.data` is `data`.

    >>> from workflow_sdk.testing import run
    >>> run(lambda e: e.data["n"] + 1, start_event({"n": 1})).value
    2
    """
    from ..values import encode

    if data is not None and not isinstance(data, Mapping):
        raise TypeError(f"start_event: data must be a dict, got {type(data).__name__}")
    return {
        "event_id": new_id("evt"),
        "session_id": session_id,
        "event_type": "start",
        "data": encode(dict(data or {})),
        "data_encoding": "sdk",
    }
