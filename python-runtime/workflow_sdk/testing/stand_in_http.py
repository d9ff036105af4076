"""The stand-in API server's HTTP pieces: the answers (`Reply`), the requests it records
(`Request`), route patterns, and the request handler that serves a `StandIn`.

See api_stand_in.py (the server) and docs/testing.md#a-stand-in-api.
"""

import base64
import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler


class Reply:
    """An answer: `status`, a `body` (dict/list/number/bool/None: JSON; `str`: text; `bytes`:
    as is) and extra `headers`."""

    def __init__(self, status=200, body=None, headers=None):
        if not isinstance(status, int) or not 100 <= status <= 599:
            raise ValueError(f"stand-in: a reply's status must be an int 100-599, not {status!r}")
        self.status, self.body, self.headers = status, body, dict(headers or {})

    def __repr__(self):
        return f"Reply({self.status}, {self.body!r})"

    def encode(self):
        """`(content type, bytes)` of the body."""
        if isinstance(self.body, bytes):
            return "application/octet-stream", self.body
        if isinstance(self.body, str):
            return "text/plain; charset=utf-8", self.body.encode()
        return "application/json; charset=utf-8", json.dumps(self.body).encode()


def _reply(answer):
    """Any answer form a route may give, as a Reply."""
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, tuple):
        if not 2 <= len(answer) <= 3:
            raise ValueError(f"stand-in: a tuple answer is (status, body[, headers]), not {answer!r}")
        return Reply(*answer)
    return Reply(200, answer)


class _Headers:
    """Request headers: a case-insensitive mapping (`items()` keeps the names as sent)."""

    def __init__(self, pairs):
        self._pairs = list(pairs)

    def get(self, name, default=None):
        for key, value in self._pairs:
            if key.lower() == name.lower():
                return value
        return default

    def __getitem__(self, name):
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name):
        return self.get(name) is not None

    def items(self):
        return list(self._pairs)

    def __repr__(self):
        return repr(dict(self._pairs))


class Request:
    """One request the stand-in received, and what it answered.

    `method`, `path` (as sent, percent-encoded, no query), `query` (`{name: value}`, the last
    value of a repeated name; `query_list` has every pair), `headers` (case-insensitive), `body`
    (bytes), `text`, `json` (the body parsed when it is JSON, else None), `form` (the fields of a
    form-encoded body, else None), `data` (the JSON object, else the form, else the query),
    `params` (the path pattern's `{names}`, decoded), `route` (the pattern that answered, or
    None), `status` and `reply_body` (what it answered).
    """

    def __init__(self, method, target, headers, body):
        self.method = method
        path, _, query = target.partition("?")
        self.path = path
        self.query_list = urllib.parse.parse_qsl(query, keep_blank_values=True)
        self.query = dict(self.query_list)
        self.headers = _Headers(headers)
        self.body = body
        self.params = {}
        self.route = None
        self.status = None
        self.reply_body = None

    @property
    def text(self):
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def json(self):
        text = self.text
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    @property
    def form(self):
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded" or self.text is None:
            return None
        return dict(urllib.parse.parse_qsl(self.text, keep_blank_values=True))

    @property
    def data(self):
        body = self.json
        if isinstance(body, dict):
            return body
        return self.form if self.form is not None else dict(self.query)

    def __repr__(self):
        return f"<Request {self.method} {self.path} -> {self.status}>"

    def to_json(self):
        text = self.text
        body = {"text": text} if text is not None else {"base64": base64.b64encode(self.body).decode()}
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query_list,
            "headers": self.headers.items(),
            "body": body,
        }


def _pattern(path):
    """A path pattern's regex: `{name}` matches one segment (or part of one), `*` anything."""
    if not (path.startswith("/") or path == "*"):
        raise ValueError(f"stand-in: a route's path starts with '/', not {path!r}")
    if "?" in path:
        raise ValueError(f"stand-in: a route's path has no query (read it in request.query): {path!r}")
    out, names = [], []
    for piece in re.split(r"(\{[A-Za-z_]\w*\}|\*)", path):
        if piece == "*":
            out.append(".*")
        elif piece.startswith("{") and piece.endswith("}"):
            names.append(piece[1:-1])
            out.append(f"(?P<{piece[1:-1]}>[^/]+?)")
        else:
            out.append(re.escape(piece))
    if len(set(names)) != len(names):
        raise ValueError(f"stand-in: a name twice in the route {path!r}")
    return re.compile("".join(out) + r"/?\Z")


class _Route:
    def __init__(self, method, path, answer):
        self.method = method.upper()
        self.path = path
        self.regex = _pattern(path)
        self.answer = answer

    def match(self, method, path):
        if self.method not in ("*", method):
            return None
        for candidate in (path, urllib.parse.unquote(path)):
            m = self.regex.match(candidate)
            if m:
                return {k: urllib.parse.unquote(v) for k, v in m.groupdict().items()}
        return None

    def __str__(self):
        return f"{self.method} {self.path}"


class _Sequence:
    """Recorded answers served in order, the last one again once all were served."""

    def __init__(self, replies):
        self.replies, self.served = replies, 0
        self.lock = threading.Lock()

    def __call__(self, request):
        with self.lock:
            reply = self.replies[min(self.served, len(self.replies) - 1)]
            self.served += 1
        return reply


def _literal(path):
    """A pattern matching exactly `path` (braces and stars in it taken literally)."""
    return path.replace("*", "%2A").replace("{", "%7B").replace("}", "%7D")


def _handler(stand):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: nothing held open at stop
        timeout = 30

        def _serve(self):
            body = self._body()
            request = Request(self.command, self.path, self.headers.items(), body)
            reply = stand._answer(request)
            stand._record(request, reply)
            kind, data = reply.encode()
            if reply.status in (204, 304):
                kind, data = None, b""  # no body, whatever the route gave
            self.send_response(reply.status)
            names = {k.lower() for k in reply.headers}
            if kind and "content-type" not in names:
                self.send_header("Content-Type", kind)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _body(self):
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

        def log_message(self, *args):
            pass

    return Handler
