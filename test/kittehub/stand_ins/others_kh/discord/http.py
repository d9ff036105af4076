"""discord.py's REST side: `Route.BASE` (the SDK sets it from `<conn>__base_url`) and one
request with `Authorization: Bot <token>`; an error status raises discord.py's exceptions."""

import json
import urllib.error
import urllib.request

from .errors import Forbidden, HTTPException, NotFound


class Route:
    BASE = "https://discord.com/api/v10"

    def __init__(self, method, path, **params):
        self.method, self.url = method, self.BASE + path.format(**params)


def request(route, token, json_body=None):
    headers = {"Authorization": f"Bot {token}", "User-Agent": "DiscordBot (stand-in, 2)"}
    data = None
    if json_body is not None:
        data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
    req = urllib.request.Request(route.url, data=data, headers=headers, method=route.method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        body = e.read()
        error = {403: Forbidden, 404: NotFound}.get(e.code, HTTPException)
        raise error(e.code, body.decode(errors="replace")) from None


def get(route, token):
    return request(route, token)
