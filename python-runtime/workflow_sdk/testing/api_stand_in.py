"""A stand-in API server for tests: `testing.stand_in(...)`.

It listens on 127.0.0.1 (a free port), answers the routes a test declares and the ready-made
ones of a preset (GitHub, Slack, Telegram, Google, Discord, Jira, Confluence, Twilio), and records every
request. `api.env("conn")` gives the connection vars that send a client helper there
(`<conn>__base_url` and stand-in credentials). Standard library only.

>>> import json, urllib.request
>>> with stand_in() as api:
...     api.route("GET", "/things/{id}", lambda request: {"id": request.params["id"]})
...     with urllib.request.urlopen(api.url + "/things/7?full=1") as response:
...         body = json.load(response)
>>> body, api.calls("GET", "/things/{id}")[0].query
({'id': '7'}, {'full': '1'})

See docs/testing.md#a-stand-in-api.
"""

import base64
import itertools
import json
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["PRESETS", "Reply", "Request", "StandIn", "stand_in"]

RECORDING_VERSION = 1


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


class StandIn:
    """The server `stand_in(...)` returns; start it with `with` (or `start()` / `stop()`)."""

    def __init__(self, *presets, routes=None, replay=None):
        self._lock = threading.Lock()
        self._routes = []
        self._requests = []
        self._exchanges = []
        self._counter = itertools.count(1)
        self._server = None
        self._thread = None
        self.presets = []
        for name in presets:
            self.preset(name)
        if replay is not None:
            self.replay(replay)
        for key, answer in (routes or {}).items():
            method, _, path = key.partition(" ") if isinstance(key, str) else (key[0], " ", key[1])
            self.route(method, path, answer)

    # -- declaring ---------------------------------------------------------------------------

    def route(self, method, path, answer=None, *, status=None):
        """Answer `method` (`"*"`: any) on `path` (a pattern: `{name}` one segment, `*` anything)
        with `answer`: a body (dict/list: JSON, `str`: text), `(status, body[, headers])`, a
        `Reply`, or a callable taking the `Request` and returning one of those. `status=` with a
        plain body. The latest declaration of a route wins over earlier ones and presets'."""
        if status is not None:
            if callable(answer):
                raise ValueError("stand-in: status= goes with a body, not a function (return (status, body))")
            answer = Reply(status, answer)
        if not callable(answer):
            _reply(answer).encode()  # a bad answer is the test's mistake: say so now
        route = _Route(method, path, answer)
        with self._lock:
            self._routes.append(route)

    def preset(self, name):
        """Add a preset's routes (`PRESETS`: github, slack, telegram, google, discord, jira,
        confluence, twilio; gmail, calendar, drive, sheets are google)."""
        key = _ALIASES.get(name, name)
        if key not in PRESETS:
            raise ValueError(f"stand-in: no preset {name!r}; there are {sorted(PRESETS)}")
        for method, path, answer in PRESETS[key].routes(self):
            self.route(method, path, answer)
        self.presets.append(name)
        return self

    def replay(self, path):
        """Answer the requests of a recording (`save`) as recorded: per method and path, the
        recorded answers in order, the last one again after."""
        with open(path, encoding="utf-8") as f:
            recording = json.load(f)
        if recording.get("version") != RECORDING_VERSION:
            raise ValueError(f"stand-in: {path} is not a stand-in recording (version {RECORDING_VERSION})")
        grouped = {}
        for exchange in recording["exchanges"]:
            req, rep = exchange["request"], exchange["reply"]
            body = rep["body"]
            if "json" in body:
                value = body["json"]
            elif "text" in body:
                value = body["text"]
            else:
                value = base64.b64decode(body["base64"])
            grouped.setdefault((req["method"], req["path"]), []).append(
                Reply(rep["status"], value, dict(rep.get("headers") or {}))
            )
        for (method, path), replies in grouped.items():
            with self._lock:
                self._routes.append(_Route(method, _literal(path), _Sequence(replies)))
        return self

    # -- running -----------------------------------------------------------------------------

    def start(self):
        if self._server is not None:
            raise RuntimeError("stand-in: already started")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = False  # stop() waits for requests being answered
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"stand-in {self.url}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self):
        """Stop serving, wait for requests being answered, close the socket. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        self._thread.join()
        self._closed_url = f"http://127.0.0.1:{server.server_address[1]}"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        """`http://127.0.0.1:<port>`, no trailing slash."""
        if self._server is None:
            closed = getattr(self, "_closed_url", None)
            if closed:
                return closed
            raise RuntimeError("stand-in: not started (use `with testing.stand_in(...) as api:`)")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self, connection, preset=None):
        """The vars that point connection `connection`'s client helper here:
        `{f"{connection}__base_url": …}` with the URL shape the helper needs, and stand-in
        credentials for the preset's helper (override any with your own)."""
        from ..connections import check_connection_name

        check_connection_name(connection)
        if preset is None:
            if len(self.presets) > 1:
                raise ValueError(f"stand-in: which preset is {connection!r}? say env({connection!r}, preset)")
            preset = self.presets[0] if self.presets else None
        if preset is None:
            return {f"{connection}__base_url": self.url}
        key = _ALIASES.get(preset, preset)
        if key not in PRESETS:
            raise ValueError(f"stand-in: no preset {preset!r}; there are {sorted(PRESETS)}")
        spec = PRESETS[key]
        base_path = spec.base_path
        if key == "google":
            if preset not in _GOOGLE_PATHS:
                raise ValueError(
                    f"stand-in: which Google API does {connection!r} call? say env({connection!r}, "
                    f"one of {sorted(_GOOGLE_PATHS)}): their clients' paths differ"
                )
            base_path = _GOOGLE_PATHS[preset]
        out = {f"{connection}__base_url": self.url + base_path}
        out.update({f"{connection}__{name}": value for name, value in spec.credentials.items()})
        return out

    # -- what it received --------------------------------------------------------------------

    @property
    def requests(self):
        """Every request received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def calls(self, method="*", path="*"):
        """The requests with `method` (`"*"`: any) on `path` (a pattern, as in `route`)."""
        probe = _Route(method, path, None)
        return [r for r in self.requests if probe.match(r.method, r.path) is not None]

    def clear(self):
        """Forget the requests received so far."""
        with self._lock:
            self._requests.clear()
            self._exchanges.clear()

    def save(self, path):
        """Write every request and its answer to `path` (JSON), for `stand_in(replay=path)`."""
        with self._lock:
            exchanges = list(self._exchanges)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"version": RECORDING_VERSION, "exchanges": exchanges}, f, indent=1)
            f.write("\n")

    def next_id(self):
        """1, 2, 3, …: for presets' ids."""
        return next(self._counter)

    # -- serving -----------------------------------------------------------------------------

    def _answer(self, request):
        with self._lock:
            routes = list(reversed(self._routes))
        for route in routes:
            params = route.match(request.method, request.path)
            if params is None:
                continue
            request.params, request.route = params, route.path
            try:
                answer = route.answer(request) if callable(route.answer) else route.answer
                reply = _reply(answer)
                reply.encode()
                return reply
            except Exception as e:  # the route's bug: answered, and recorded with the request
                return Reply(500, {"error": f"stand-in: route {route} raised {type(e).__name__}: {e}"})
        return Reply(
            404,
            {
                "error": f"stand-in: no route for {request.method} {request.path}",
                "method": request.method,
                "path": request.path,
                "routes": [str(r) for r in reversed(routes)],
            },
        )

    def _record(self, request, reply):
        request.status, request.reply_body = reply.status, reply.body
        if isinstance(reply.body, bytes):
            body = {"base64": base64.b64encode(reply.body).decode()}
        elif isinstance(reply.body, str):
            body = {"text": reply.body}
        else:
            body = {"json": reply.body}
        exchange = {
            "request": request.to_json(),
            "reply": {"status": reply.status, "headers": reply.headers, "body": body},
        }
        with self._lock:
            self._requests.append(request)
            self._exchanges.append(exchange)


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


def stand_in(*presets, routes=None, replay=None):
    """A stand-in API server (not started: use it in `with`): `presets` by name, `routes`
    `{("POST", "/path"): answer}` (or `{"POST /path": answer}`), `replay` a recording's path.

    >>> with stand_in("telegram") as api:
    ...     sorted(api.env("tg"))
    ['tg__BotToken', 'tg__base_url']
    """
    return StandIn(*presets, routes=routes, replay=replay)


# -- presets ---------------------------------------------------------------------------------


class _Preset:
    def __init__(self, base_path, credentials, routes):
        self.base_path, self.credentials, self.routes = base_path, credentials, routes


def _now():
    return int(time.time())


def _slack_message_routes(api):
    def post_message(request):
        data = request.data
        ts = f"{_now()}.{api.next_id():06d}"
        message = {
            "type": "message",
            "user": "U0STANDIN",
            "bot_id": "B0STANDIN",
            "text": data.get("text", ""),
            "ts": ts,
        }
        if data.get("thread_ts"):
            message["thread_ts"] = data["thread_ts"]
        return {"ok": True, "channel": data.get("channel", ""), "ts": ts, "message": message}

    def update(request):
        data = request.data
        return {
            "ok": True,
            "channel": data.get("channel", ""),
            "ts": data.get("ts", ""),
            "text": data.get("text", ""),
        }

    ok = {"ok": True}
    return [
        ("*", "/api/chat.postMessage", post_message),
        ("*", "/api/chat.postEphemeral", {"ok": True, "message_ts": "1700000000.000001"}),
        ("*", "/api/chat.update", update),
        ("*", "/api/chat.delete", ok),
        ("*", "/api/reactions.add", ok),
        ("*", "/api/conversations.replies", {"ok": True, "messages": [], "has_more": False}),
        ("*", "/api/conversations.history", {"ok": True, "messages": [], "has_more": False}),
        ("*", "/api/views.open", ok),
        ("*", "/api/views.publish", ok),
    ]


def _slack_directory_routes(api):
    def auth(request):
        return {
            "ok": True,
            "url": api.url + "/",
            "team": "Stand-in",
            "user": "stand-in-bot",
            "team_id": "T0STANDIN",
            "user_id": "U0STANDIN",
            "bot_id": "B0STANDIN",
        }

    def user(request):
        uid = request.data.get("user", "U0USER")
        name = f"user-{uid.lower()}"
        profile = {"real_name": name, "display_name": name, "email": f"{name}@example.com"}
        return {
            "ok": True,
            "user": {"id": uid, "name": name, "real_name": name, "is_bot": False, "profile": profile},
        }

    def by_email(request):
        email = request.data.get("email", "someone@example.com")
        profile = {"email": email, "real_name": email.split("@")[0]}
        return {"ok": True, "user": {"id": "U0BYEMAIL", "name": email.split("@")[0], "profile": profile}}

    def conversation(request):
        channel = request.data.get("channel", "C0STANDIN")
        return {
            "ok": True,
            "channel": {"id": channel, "name": f"channel-{channel.lower()}", "is_channel": True},
        }

    def opened(request):
        return {"ok": True, "channel": {"id": "D0STANDIN"}}

    def created(request):
        name = request.data.get("name", "new-channel")
        return {"ok": True, "channel": {"id": f"C{api.next_id():08d}", "name": name, "is_channel": True}}

    return [
        ("*", "/api/auth.test", auth),
        ("*", "/api/conversations.info", conversation),
        ("*", "/api/conversations.open", opened),
        ("*", "/api/conversations.create", created),
        ("*", "/api/conversations.invite", {"ok": True}),
        ("*", "/api/users.info", user),
        ("*", "/api/users.lookupByEmail", by_email),
    ]


def _slack_routes(api):
    return _slack_message_routes(api) + _slack_directory_routes(api)


_TELEGRAM_BOT = {"id": 100000001, "is_bot": True, "first_name": "Stand-in", "username": "stand_in_bot"}


def _telegram_routes(api):
    def send(request):
        data = request.data
        chat_id = data.get("chat_id", 0)
        try:
            chat_id = int(chat_id)
        except (TypeError, ValueError):
            pass
        chat = {"id": chat_id, "type": "private"}
        return {
            "ok": True,
            "result": {
                "message_id": api.next_id(),
                "date": _now(),
                "chat": chat,
                "from": _TELEGRAM_BOT,
                "text": data.get("text", ""),
            },
        }

    info = {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
    return [
        ("*", "/bot{token}/getMe", {"ok": True, "result": _TELEGRAM_BOT}),
        ("*", "/bot{token}/sendMessage", send),
        ("*", "/bot{token}/setWebhook", {"ok": True, "result": True, "description": "Webhook was set"}),
        (
            "*",
            "/bot{token}/deleteWebhook",
            {"ok": True, "result": True, "description": "Webhook was deleted"},
        ),
        ("*", "/bot{token}/getWebhookInfo", {"ok": True, "result": info}),
        ("*", "/bot{token}/answerCallbackQuery", {"ok": True, "result": True}),
    ]


def _google_routes(api):
    def event_inserted(request):
        body = request.json if isinstance(request.json, dict) else {}
        eid = f"standin{api.next_id()}"
        return {
            **body,
            "kind": "calendar#event",
            "id": eid,
            "status": "confirmed",
            "htmlLink": f"https://calendar.google.com/event?eid={eid}",
            "sequence": 0,
        }

    def file_created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return {
            "kind": "drive#file",
            "id": f"file{api.next_id()}",
            "name": body.get("name", "Untitled"),
            "mimeType": body.get("mimeType", "application/octet-stream"),
        }

    def sent(request):
        return {"id": f"msg{api.next_id()}", "threadId": f"thread{api.next_id()}", "labelIds": ["SENT"]}

    def message(request):
        return {
            "id": request.params["id"],
            "threadId": "thread0",
            "labelIds": ["INBOX"],
            "snippet": "",
            "payload": {"headers": [], "mimeType": "text/plain", "body": {"size": 0}},
        }

    token = {"access_token": "ya29.stand-in", "expires_in": 3600, "token_type": "Bearer"}
    return [
        ("POST", "/token", token),
        (
            "GET",
            "/calendar/v3/calendars/{calendar}/events",
            {"kind": "calendar#events", "items": [], "nextSyncToken": "stand-in-sync"},
        ),
        ("POST", "/calendar/v3/calendars/{calendar}/events", event_inserted),
        ("GET", "/drive/v3/files", {"kind": "drive#fileList", "files": [], "incompleteSearch": False}),
        ("POST", "/drive/v3/files", file_created),
        ("POST", "/gmail/v1/users/{user}/messages/send", sent),
        ("GET", "/gmail/v1/users/{user}/messages", {"messages": [], "resultSizeEstimate": 0}),
        ("GET", "/gmail/v1/users/{user}/messages/{id}", message),
    ] + _sheets_routes(api)


def _sheets_routes(api):
    # Rows appended to a sheet (`{(spreadsheet id, sheet title): [row, …]}`), as strings (what
    # Sheets gives back for plain values); a read of any range of that sheet returns them all.
    sheets = {}
    lock = threading.Lock()

    def where(request):
        return request.params["id"], request.params["range"].split("!")[0].strip("'")

    def values(request):
        with lock:
            rows = list(sheets.get(where(request), []))
        out = {"range": request.params["range"], "majorDimension": "ROWS"}
        return {**out, "values": rows} if rows else out

    def appended(request):
        rows = (request.json or {}).get("values") or []
        with lock:
            sheets.setdefault(where(request), []).extend([[str(v) for v in row] for row in rows])
        sheet = where(request)[1]
        updates = {
            "spreadsheetId": request.params["id"],
            "updatedRange": f"{sheet}!A1",
            "updatedRows": len(rows),
            "updatedColumns": max((len(r) for r in rows), default=0),
            "updatedCells": sum(len(r) for r in rows),
        }
        return {"spreadsheetId": request.params["id"], "tableRange": f"{sheet}!A1", "updates": updates}

    def updated(request):
        rows = (request.json or {}).get("values") or []
        return {
            "spreadsheetId": request.params["id"],
            "updatedRange": request.params["range"],
            "updatedRows": len(rows),
            "updatedCells": sum(len(r) for r in rows),
        }

    def spreadsheet(request):
        sid = request.params["id"]
        sheet = {
            "properties": {
                "sheetId": 0,
                "title": "Sheet1",
                "index": 0,
                "sheetType": "GRID",
                "gridProperties": {"rowCount": 1000, "columnCount": 26},
            }
        }
        return {
            "spreadsheetId": sid,
            "properties": {"title": "Stand-in sheet", "locale": "en_US", "timeZone": "Etc/GMT"},
            "sheets": [sheet],
            "spreadsheetUrl": f"https://docs.google.com/spreadsheets/d/{sid}/edit",
        }

    return [
        ("GET", "/v4/spreadsheets/{id}", spreadsheet),
        ("GET", "/v4/spreadsheets/{id}/values/{range}", values),
        ("PUT", "/v4/spreadsheets/{id}/values/{range}", updated),
        ("POST", "/v4/spreadsheets/{id}/values/{range}:append", appended),
    ]


def _github_routes(api):
    def repo(request):
        owner, name = request.params["owner"], request.params["repo"]
        return {
            "id": 1,
            "name": name,
            "full_name": f"{owner}/{name}",
            "owner": {"login": owner, "type": "User"},
            "private": False,
            "default_branch": "main",
            "url": f"{api.url}/repos/{owner}/{name}",
            "html_url": f"https://github.com/{owner}/{name}",
        }

    def issue(request, number=None, title="Stand-in issue"):
        owner, name = request.params["owner"], request.params["repo"]
        number = number or int(request.params["number"])
        return {
            "id": 1000 + number,
            "number": number,
            "title": title,
            "state": "open",
            "body": None,
            "labels": [],
            "user": {"login": "stand-in"},
            "url": f"{api.url}/repos/{owner}/{name}/issues/{number}",
            "html_url": f"https://github.com/{owner}/{name}/issues/{number}",
        }

    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return 201, {**issue(request, api.next_id(), body.get("title", "")), "body": body.get("body")}

    def comment(request):
        cid = api.next_id()
        where = f"{api.url}/repos/{request.params['owner']}/{request.params['repo']}/issues/comments/{cid}"
        return 201, {
            "id": cid,
            "body": (request.json or {}).get("body", ""),
            "user": {"login": "stand-in"},
            "url": where,
        }

    def labels(request):
        given = request.json if isinstance(request.json, list) else (request.json or {}).get("labels", [])
        return [{"name": n, "color": "ededed"} for n in given]

    issues = "/repos/{owner}/{repo}/issues"
    return [
        ("GET", "/user", {"login": "stand-in", "id": 1, "type": "User"}),
        ("GET", "/repos/{owner}/{repo}", repo),
        ("POST", issues, created),
        ("GET", issues + "/{number}", issue),
        ("PATCH", issues + "/{number}", issue),
        ("GET", issues + "/{number}/comments", []),
        ("POST", issues + "/{number}/comments", comment),
        ("POST", issues + "/{number}/labels", labels),
    ]


_DISCORD_BOT = {"id": "100000000000000001", "username": "stand-in-bot", "discriminator": "0", "bot": True}


def _discord_routes(api):
    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return {
            "id": str(200000000000000000 + api.next_id()),
            "channel_id": request.params["channel"],
            "content": body.get("content", ""),
            "author": _DISCORD_BOT,
            "type": 0,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        }

    return [
        ("GET", "/api/v10/users/@me", _DISCORD_BOT),
        ("GET", "/api/v10/gateway/bot", {"url": "wss://gateway.discord.gg", "shards": 1}),
        ("POST", "/api/v10/channels/{channel}/messages", created),
        ("GET", "/api/v10/channels/{channel}/messages", []),
    ]


def _jira_routes(api):
    def created(request):
        fields = (request.json or {}).get("fields") or {}
        project = (fields.get("project") or {}).get("key", "PROJ")
        n = api.next_id()
        return 201, {
            "id": str(10000 + n),
            "key": f"{project}-{n}",
            "self": f"{api.url}/rest/api/2/issue/{10000 + n}",
        }

    def issue(request):
        key = request.params["key"]
        fields = {
            "summary": "Stand-in issue",
            "status": {"name": "To Do"},
            "issuetype": {"name": "Task"},
            "project": {"key": key.split("-")[0]},
            "description": None,
            "comment": {"comments": []},
        }
        return {"id": "10000", "key": key, "self": f"{api.url}/rest/api/2/issue/{key}", "fields": fields}

    def comment(request):
        body = (request.json or {}).get("body", "")
        return 201, {"id": str(20000 + api.next_id()), "body": body}

    routes = []
    for v in ("2", "3"):
        routes += [
            ("POST", f"/rest/api/{v}/issue", created),
            ("GET", f"/rest/api/{v}/issue/{{key}}", issue),
            ("PUT", f"/rest/api/{v}/issue/{{key}}", Reply(204, "")),
            ("POST", f"/rest/api/{v}/issue/{{key}}/comment", comment),
            ("GET", f"/rest/api/{v}/myself", {"accountId": "stand-in", "displayName": "Stand-in"}),
        ]
    return routes


def _confluence_routes(api):
    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        cid = str(30000 + api.next_id())
        return {
            **body,
            "id": cid,
            "type": body.get("type", "page"),
            "status": "current",
            "version": {"number": 1},
            "_links": {"webui": f"/spaces/X/pages/{cid}", "base": api.url + "/wiki"},
        }

    def content(request):
        cid = request.params["id"]
        return {
            "id": cid,
            "type": "page",
            "status": "current",
            "title": "Stand-in page",
            "version": {"number": 1},
            "body": {"storage": {"value": "", "representation": "storage"}},
        }

    return [
        ("GET", "/wiki/rest/api/content", {"results": [], "start": 0, "limit": 25, "size": 0}),
        ("POST", "/wiki/rest/api/content", created),
        ("GET", "/wiki/rest/api/content/{id}", content),
        ("PUT", "/wiki/rest/api/content/{id}", content),
    ]


def _twilio_routes(api):
    def created(request):
        data = request.data
        sid = request.params["account"]
        msid = f"SM{api.next_id():032x}"
        return 201, {
            "sid": msid,
            "account_sid": sid,
            "to": data.get("To", ""),
            "from": data.get("From", ""),
            "body": data.get("Body", ""),
            "status": "queued",
            "num_segments": "1",
            "uri": f"/2010-04-01/Accounts/{sid}/Messages/{msid}.json",
        }

    return [
        ("POST", "/2010-04-01/Accounts/{account}/Messages.json", created),
        ("GET", "/2010-04-01/Accounts/{account}/Messages.json", {"messages": [], "page": 0}),
    ]


_ATLASSIAN_CREDENTIALS = {"Token": "stand-in-token", "Email": "stand-in@example.com"}

PRESETS = {
    "github": _Preset("", {"pat": "ghp_stand-in"}, _github_routes),
    "slack": _Preset("/api/", {"oauth_access_token": "xoxb-stand-in"}, _slack_routes),
    "telegram": _Preset("", {"BotToken": "100000001:stand-in"}, _telegram_routes),
    "google": _Preset(
        "/",
        {"auth_type": "oauth", "oauth_AccessToken": "ya29.stand-in", "oauth_Expiry": "2099-01-01T00:00:00Z"},
        _google_routes,
    ),
    "discord": _Preset("/api/v10", {"BotToken": "stand-in-bot-token"}, _discord_routes),
    "jira": _Preset("", _ATLASSIAN_CREDENTIALS, _jira_routes),
    "confluence": _Preset("/wiki", _ATLASSIAN_CREDENTIALS, _confluence_routes),
    "twilio": _Preset(
        "",
        {
            "Username": "AC00000000000000000000000000000000",
            "Password": "stand-in",
            "AccountSID": "AC00000000000000000000000000000000",
        },
        _twilio_routes,
    ),
}
# What `<conn>__base_url` ends with per Google API: googleapiclient drops a discovery document's
# service path (Calendar's `calendar/v3/`, Drive's `drive/v3/`) when given an endpoint, while
# Sheets' and Gmail's paths carry their version; gspread keeps the paths whole.
_GOOGLE_PATHS = {
    "calendar": "/calendar/v3/",
    "googlecalendar": "/calendar/v3/",
    "drive": "/drive/v3/",
    "googledrive": "/drive/v3/",
    "gmail": "/",
    "sheets": "/",
    "googlesheets": "/",
    "gspread": "/",
}
_ALIASES = {
    "gmail": "google",
    "calendar": "google",
    "googlecalendar": "google",
    "drive": "google",
    "googledrive": "google",
    "sheets": "google",
    "googlesheets": "google",
    "gspread": "google",
}


def main(argv=None):
    """`python3 -m workflow_sdk.testing.serve_stand_in [preset …] [--save FILE] [--replay FILE]`: serve
    until standard input closes (or Ctrl-C), printing the URL as a JSON line first."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python3 -m workflow_sdk.testing.serve_stand_in")
    parser.add_argument("presets", nargs="*")
    parser.add_argument("--save", help="write the requests and answers here when it stops")
    parser.add_argument("--replay", help="answer as this recording did")
    args = parser.parse_args(argv)
    with stand_in(*args.presets, replay=args.replay) as api:
        print(json.dumps({"url": api.url, "presets": api.presets}), flush=True)
        try:
            while sys.stdin.readline():
                pass
        except KeyboardInterrupt:
            pass
    if args.save:
        api.save(args.save)
