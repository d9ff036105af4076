"""Kittehub stand-ins' one HTTP call (tests only, never shipped): a JSON POST with urllib, so
the stand-in API (a plan's routes) decides what the "model" or search service answers."""

import json
import urllib.error
import urllib.request


class StandInHTTPError(RuntimeError):
    """A non-2xx answer: `status` and the start of the body."""

    def __init__(self, status: int, body: str):
        super().__init__(f"{status} {body}")
        self.status = status
        self.body = body


def post_json(url: str, body: dict, headers: dict[str, str]) -> dict:
    req = urllib.request.Request(
        url,
        data=json.dumps(body, default=str).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise StandInHTTPError(e.code, e.read()[:300].decode(errors="replace")) from None
