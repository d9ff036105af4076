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
  `data` (JSON, form or query) and headers: what the service itself sent (a webhook's secret).

It stops when its standard input closes.
"""

import json
import os
import sys

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


def _handle(api, command):
    op = command.get("op")
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
        _declare(api, routes)
        print(json.dumps({"url": api.url, "presets": api.presets}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                out = _handle(api, json.loads(line))
            except Exception as e:  # the harness's mistake or a bad plan: say it, keep serving
                out = {"error": f"{type(e).__name__}: {e}"}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv)
