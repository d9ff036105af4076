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

The HTTP pieces are in `stand_in_http`, the presets in `stand_in_presets` (their routes in
`stand_in_chat`, `stand_in_google`, `stand_in_trackers`); `serve_stand_in` runs it as a program.

See docs/testing.md#a-stand-in-api.
"""

import base64
import itertools
import json
import threading
from http.server import ThreadingHTTPServer

from .stand_in_google import _GOOGLE_PATHS
from .stand_in_http import Reply, Request, _handler, _literal, _reply, _Route, _Sequence
from .stand_in_presets import _ALIASES, PRESETS

__all__ = ["PRESETS", "Reply", "Request", "StandIn", "stand_in"]

RECORDING_VERSION = 1


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


def stand_in(*presets, routes=None, replay=None):
    """A stand-in API server (not started: use it in `with`): `presets` by name, `routes`
    `{("POST", "/path"): answer}` (or `{"POST /path": answer}`), `replay` a recording's path.

    >>> with stand_in("telegram") as api:
    ...     sorted(api.env("tg"))
    ['tg__BotToken', 'tg__base_url']
    """
    return StandIn(*presets, routes=routes, replay=replay)
