"""The kittehub harness's stand-in API: `workflow_sdk.testing.stand_in` with every preset, driven
over its standard input, one JSON command a line, one JSON answer a line on standard output.

    python3 test/kittehub/stand_in.py '<routes JSON>'

The argument (optional) is `{"METHOD /path/{x}": answer}`: routes served from the start. An
answer is a JSON body, `{"status": 201, "body": …, "headers": {…}}` (a dict whose keys are
only those, with an integer `status`), or `{"$sequence": [answer, …]}` (each in turn, the last
again after). `"$API"` in any string is the stand-in's URL. A route `"GET http://host/path"`
answers a session whose HTTP client takes the stand-in as its proxy (an entry's `proxy: true`).

The first line printed is `{"url": …, "presets": […]}`. Commands:

- `{"op": "routes", "routes": {…}}`: declare more routes (they win over earlier ones);
- `{"op": "env", "connection": "c", "preset": "slack"}`: `api.env(c, preset)`;
- `{"op": "mark"}`: how many requests it has received so far (`{"mark": n}`);
- `{"op": "calls", "since": n, "expect": ["POST /api/x", …]}`: the requests received from the
  n-th on (`"METHOD /path status"`) and which expected patterns none of them matched (a
  pattern `"POST /api/x ~text"` also needs `text` in the request's body);
- `{"op": "requests", "method": "POST", "path": "/bot{t}/setWebhook"}`: those requests' paths,
  `data` (JSON, form or query) and headers: what the service itself sent (a webhook's secret);
- `{"op": "google_push", "kind": "calendar"|"drive", "inbound": "/inbound/…", "changes": […]}`:
  the changes the service's next sync read of that kind gives, and the newest channel the
  service made to that inbound path (`id`, `token`, `resourceId`, `messages`), or null;
- `{"op": "gmail", "history": […]}`: the history records the next read gives; answers the
  `emailAddress` and `historyId` a push names;
- `{"op": "forms", "kind": "RESPONSES"|"SCHEMA", "form": {…}, "responses": […]}`: what
  forms.get and responses.list give; answers the `watchId` the service made of that kind.

It stops when its standard input closes.
"""

import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python-runtime"))

from workflow_sdk.testing import Reply, StandIn  # noqa: E402
from workflow_sdk.testing.stand_in_http import _Route  # noqa: E402
from workflow_sdk.testing.stand_in_presets import PRESETS  # noqa: E402

REPLY_KEYS = {"status", "body", "headers"}


def _fill(value, url):
    """`"$API"` → the stand-in's URL, in every string of `value`."""
    if isinstance(value, str):
        return value.replace("$API", url)
    if isinstance(value, list):
        return [_fill(v, url) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, url) for k, v in value.items()}
    return value


def _answer(value):
    """A plan's answer: `{"status", "body", "headers"}` a Reply, `{"$sequence": [a, b, …]}` each
    in turn (the last again after), else the body itself."""
    if isinstance(value, dict) and set(value) == {"$sequence"} and value["$sequence"]:
        answers, served = [_answer(v) for v in value["$sequence"]], itertools.count()
        return lambda request: answers[min(next(served), len(answers) - 1)]
    if isinstance(value, dict) and "status" in value and set(value) <= REPLY_KEYS:
        if isinstance(value["status"], int):
            return Reply(value["status"], value.get("body"), dict(value.get("headers") or {}))
    return value


class _Proxy:
    """Routes for `http://host/path` URLs, reached when a session's HTTP client takes the
    stand-in as its proxy (HTTP_PROXY): the request's target is then the absolute URL. Served by
    a catch-all route declared before every other, so that any other route wins over it."""

    def __init__(self, api):
        self.routes = []
        api.route("*", "*", self.answer)

    def add(self, method, url, answer):
        rest = url[len("http://") :]
        self.routes.insert(0, (_Route(method, "/" + rest, None), answer))

    def answer(self, request):
        if request.path.startswith("http://"):
            target = "/" + request.path[len("http://") :]
            for route, answer in self.routes:
                if route.match(request.method, target) is not None:
                    return answer(request) if callable(answer) else answer
        where = f"{request.method} {request.path}"
        return (
            404,
            {"error": f"stand-in: no route for {where}", "method": request.method, "path": request.path},
        )


def _declare(api, routes, proxy):
    for key, value in (routes or {}).items():
        method, _, path = key.strip().partition(" ")
        path = path.strip()
        if path.startswith("http://"):
            proxy.add(method.upper(), path, _answer(_fill(value, api.url)))
            continue
        if not path.startswith("/"):
            raise ValueError(f"route {key!r}: expected 'METHOD /path' or 'METHOD http://host/path'")
        api.route(method.upper(), path, _answer(_fill(value, api.url)))


class _GoogleWatch:
    """The calls the service makes for Calendar's and Drive's watch channels (at the API's
    root, also when the connection's `base_url` is the client's, `<url>/calendar/v3/`): the
    channels it makes (with their tokens, for the harness's pushes) and the changes the next
    sync read gives (`changes`, set by the harness just before a push)."""

    PREFIX = {"calendar": "/calendar/v3", "drive": "/drive/v3"}

    def __init__(self, api):
        self.channels, self.pending, self.n = [], {"calendar": [], "drive": []}, 1
        cal, drv = self.PREFIX["calendar"], self.PREFIX["drive"]
        api.route("POST", cal + "/calendars/{calendar}/events/watch", self._watch("calendar"))
        api.route(
            "GET", cal + "/calendars/{calendar}/events", self._list("calendar", "items", "nextSyncToken")
        )
        api.route("GET", drv + "/changes/startPageToken", {"startPageToken": "kh-page-0"})
        api.route("POST", drv + "/changes/watch", self._watch("drive"))
        api.route("GET", drv + "/changes", self._list("drive", "changes", "newStartPageToken"))
        for prefix in self.PREFIX.values():
            api.route("POST", prefix + "/channels/stop", Reply(204, b""))

    def _watch(self, kind):
        def answer(request):
            body = request.json or {}
            resource = f"kh-res-{kind}-{len(self.channels) + 1}"
            expiration = body.get("expiration") or int(time.time() * 1000) + 3600_000
            channel = {
                "kind": kind,
                "id": body.get("id"),
                "token": body.get("token"),
                "address": body.get("address"),
                "resourceId": resource,
                "messages": 0,
            }
            self.channels.append(channel)
            return {
                "kind": "api#channel",
                "id": channel["id"],
                "resourceId": resource,
                "expiration": str(expiration),
            }

        return answer

    def _list(self, kind, field, cursor):
        def answer(request):
            items = (
                self.pending[kind] if ("syncToken" in request.query or "pageToken" in request.query) else []
            )
            self.pending[kind] = []
            self.n += 1
            return {field: items, cursor: f"kh-{kind}-{self.n}"}

        return answer

    def channel(self, kind, address_end):
        mine = [c for c in self.channels if c["kind"] == kind and str(c["address"]).endswith(address_end)]
        if not mine:
            return None
        mine[-1]["messages"] += 1
        return mine[-1]


class _GooglePubsub:
    """Google's side of Gmail's and Forms' watches, for the service's calls: users.watch,
    getProfile, history.list, stop; forms watches create/renew/delete, forms.get and
    responses.list. `gmail`/`forms` commands set what the next reads give."""

    EMAIL = "kitteh@example.com"

    def __init__(self, api):
        self.history_id, self.history, self.watches = 1000, [], {}
        self.form, self.responses = {}, []
        gm = "/gmail/v1/users/{user}"
        api.route(
            "POST",
            gm + "/watch",
            lambda r: {
                "historyId": str(self.history_id),
                "expiration": str(int(time.time() * 1000) + 7 * 86400_000),
            },
        )
        api.route(
            "GET", gm + "/profile", lambda r: {"emailAddress": self.EMAIL, "historyId": str(self.history_id)}
        )
        api.route("GET", gm + "/history", self._history)
        api.route("POST", gm + "/stop", Reply(204, b""))
        api.route("POST", "/v1/forms/{form}/watches", self._watch)
        api.route("POST", "/v1/forms/{form}/watches/{watch}:renew", self._renew)
        api.route("DELETE", "/v1/forms/{form}/watches/{watch}", {})
        api.route("GET", "/v1/forms/{form}", lambda r: {"formId": r.params["form"], **self.form})
        api.route("GET", "/v1/forms/{form}/responses", lambda r: {"responses": self.responses})

    def _history(self, request):
        records, self.history = self.history, []
        self.history_id += len(records)
        return {"history": records, "historyId": str(self.history_id)}

    def _expiry(self):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 7 * 86400))

    def _watch(self, request):
        kind = ((request.json or {}).get("watch") or {}).get("eventType", "")
        watch = {
            "id": f"kh-watch-{kind.lower()}-{len(self.watches) + 1}",
            "eventType": kind,
            "expireTime": self._expiry(),
            "state": "ACTIVE",
        }
        self.watches[kind] = watch
        return watch

    def _renew(self, request):
        mine = [w for w in self.watches.values() if w["id"] == request.params["watch"]]
        if not mine:
            return (404, {"error": {"message": "Watch not found"}})
        mine[0]["expireTime"] = self._expiry()
        return mine[0]

    def gmail(self, records):
        self.history = list(records)
        return {"emailAddress": self.EMAIL, "historyId": self.history_id + len(records)}

    def forms(self, kind, form, responses):
        if form is not None:
            self.form = form
        if responses is not None:
            self.responses = responses
        watch = self.watches.get(kind)
        return {"watchId": watch["id"] if watch else None}


def _proxied(path):
    """`http://host/path` as a path a route can match: `/host/path`."""
    return "/" + path[len("http://") :] if path.startswith("http://") else path


def _calls(api, since, expect):
    received = api.requests[since:]
    missing = []
    for pattern in expect or []:
        head, _, text = pattern.partition(" ~")
        method, _, path = head.strip().partition(" ")
        probe = _Route(method.upper(), _proxied(path.strip() or "*"), None)
        if not any(
            probe.match(r.method, _proxied(r.path)) is not None and text in (r.text or "") for r in received
        ):
            missing.append(pattern)
    seen = [f"{r.method} {r.path} {getattr(r, 'status', '?')}" for r in received]
    return {"calls": seen, "missing": missing}


def _handle(api, command, watch, pubsub, proxy):
    op = command.get("op")
    if op == "gmail":
        return pubsub.gmail(command.get("history") or [])
    if op == "forms":
        return pubsub.forms(command["kind"], command.get("form"), command.get("responses"))
    if op == "google_push":
        kind = command["kind"]
        watch.pending[kind] = list(command.get("changes") or [])
        return {"channel": watch.channel(kind, command["inbound"])}
    if op == "routes":
        _declare(api, command.get("routes"), proxy)
        return {"ok": True}
    if op == "env":
        if not command.get("preset"):  # an integration with no preset: its URL only
            return {"env": {f"{command['connection']}__base_url": api.url}}
        return {"env": api.env(command["connection"], command.get("preset"))}
    if op == "mark":
        return {"mark": len(api.requests)}
    if op == "calls":
        return _calls(api, int(command.get("since", 0)), command.get("expect"))
    if op == "requests":
        found = api.calls(command.get("method", "*"), command.get("path", "*"))
        return {
            "requests": [{"path": r.path, "data": r.data, "headers": dict(r.headers.items())} for r in found]
        }
    raise ValueError(f"unknown op {op!r}")


def main(argv):
    routes = json.loads(argv[1]) if len(argv) > 1 and argv[1] else {}
    api = StandIn()
    proxy = _Proxy(api)  # first: every route declared later wins over it
    for name in sorted(PRESETS):
        api.preset(name)
    with api:
        watch, pubsub = _GoogleWatch(api), _GooglePubsub(api)
        _declare(api, routes, proxy)
        print(json.dumps({"url": api.url, "presets": api.presets}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                out = _handle(api, json.loads(line), watch, pubsub, proxy)
            except Exception as e:  # the harness's mistake or a bad plan: say it, keep serving
                out = {"error": f"{type(e).__name__}: {e}"}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv)
