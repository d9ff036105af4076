"""The kittehub harness's stand-in API: `workflow_sdk.testing.stand_in` with every preset, driven
over its standard input, one JSON command a line, one JSON answer a line on standard output.

    python3 test/kittehub/stand_in.py '<routes JSON>'

The argument (optional) is `{"METHOD /path/{x}": answer}`: routes served from the start. An
answer is a JSON body, or `{"status": 201, "body": …, "headers": {…}}` (a dict whose keys are
only those, with an integer `status`). `"$API"` in any string is the stand-in's URL.

The first line printed is `{"url": …, "presets": […]}`. Commands:

- `{"op": "routes", "routes": {…}}`: declare more routes (they win over earlier ones);
- `{"op": "env", "connection": "c", "preset": "slack"}`: `api.env(c, preset)`;
- `{"op": "mark"}`: how many requests it has received so far (`{"mark": n}`);
- `{"op": "calls", "since": n, "expect": ["POST /api/x", …]}`: the requests received from the
  n-th on (`"METHOD /path status"`) and which expected patterns none of them matched;
- `{"op": "requests", "method": "POST", "path": "/bot{t}/setWebhook"}`: those requests' paths,
  `data` (JSON, form or query) and headers: what the service itself sent (a webhook's secret);
- `{"op": "google_push", "kind": "calendar"|"drive", "inbound": "/inbound/…", "changes": […]}`:
  the changes the service's next sync read of that kind gives, and the newest channel the
  service made to that inbound path (`id`, `token`, `resourceId`, `messages`), or null.

It stops when its standard input closes.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python-runtime"))

from workflow_sdk.testing import Reply, stand_in  # noqa: E402
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
    if isinstance(value, dict) and "status" in value and set(value) <= REPLY_KEYS:
        if isinstance(value["status"], int):
            return Reply(value["status"], value.get("body"), dict(value.get("headers") or {}))
    return value


def _declare(api, routes):
    for key, value in (routes or {}).items():
        method, _, path = key.strip().partition(" ")
        if not path.startswith("/"):
            raise ValueError(f"route {key!r}: expected 'METHOD /path'")
        api.route(method.upper(), path.strip(), _answer(_fill(value, api.url)))


class _GoogleWatch:
    """The calls the service makes for Calendar's and Drive's watch channels, under the doubled
    prefixes it calls when the connection's `base_url` is the client's (`<url>/calendar/v3/`):
    the channels it makes (with their tokens, for the harness's pushes) and the changes the next
    sync read gives (`changes`, set by the harness just before a push)."""

    PREFIX = {"calendar": "/calendar/v3/calendar/v3", "drive": "/drive/v3/drive/v3"}

    def __init__(self, api):
        self.channels, self.pending, self.n = [], {"calendar": [], "drive": []}, 1
        cal, drv = self.PREFIX["calendar"], self.PREFIX["drive"]
        api.route("POST", cal + "/calendars/{calendar}/events/watch", self._watch("calendar"))
        api.route("GET", cal + "/calendars/{calendar}/events", self._list("calendar", "items", "nextSyncToken"))
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
            channel = {"kind": kind, "id": body.get("id"), "token": body.get("token"),
                       "address": body.get("address"), "resourceId": resource, "messages": 0}
            self.channels.append(channel)
            return {"kind": "api#channel", "id": channel["id"], "resourceId": resource,
                    "expiration": str(expiration)}
        return answer

    def _list(self, kind, field, cursor):
        def answer(request):
            items = self.pending[kind] if ("syncToken" in request.query or "pageToken" in request.query) else []
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


def _calls(api, since, expect):
    received = api.requests[since:]
    missing = []
    for pattern in expect or []:
        method, _, path = pattern.strip().partition(" ")
        matched = api.calls(method.upper(), path.strip() or "*")
        if not any(any(m is r for r in received) for m in matched):
            missing.append(pattern)
    seen = [f"{r.method} {r.path} {getattr(r, 'status', '?')}" for r in received]
    return {"calls": seen, "missing": missing}


def _handle(api, command, watch):
    op = command.get("op")
    if op == "google_push":
        kind = command["kind"]
        watch.pending[kind] = list(command.get("changes") or [])
        return {"channel": watch.channel(kind, command["inbound"])}
    if op == "routes":
        _declare(api, command.get("routes"))
        return {"ok": True}
    if op == "env":
        return {"env": api.env(command["connection"], command.get("preset"))}
    if op == "mark":
        return {"mark": len(api.requests)}
    if op == "calls":
        return _calls(api, int(command.get("since", 0)), command.get("expect"))
    if op == "requests":
        found = api.calls(command.get("method", "*"), command.get("path", "*"))
        return {"requests": [{"path": r.path, "data": r.data, "headers": dict(r.headers.items())} for r in found]}
    raise ValueError(f"unknown op {op!r}")


def main(argv):
    routes = json.loads(argv[1]) if len(argv) > 1 and argv[1] else {}
    with stand_in(*sorted(PRESETS)) as api:
        watch = _GoogleWatch(api)
        _declare(api, routes)
        print(json.dumps({"url": api.url, "presets": api.presets}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                out = _handle(api, json.loads(line), watch)
            except Exception as e:  # the harness's mistake or a bad plan: say it, keep serving
                out = {"error": f"{type(e).__name__}: {e}"}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv)
