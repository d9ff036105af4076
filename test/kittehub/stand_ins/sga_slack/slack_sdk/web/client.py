"""WebClient: every `<family>_<method>` call goes to `<base_url><family>.<method>` as slack_sdk
sends it (GET with a query, a form, or JSON), with the bot token; `ok: false` raises."""

import json
import urllib.error
import urllib.parse
import urllib.request

from .slack_response import SlackResponse

_GET = {
    "users.info",
    "users.list",
    "users.lookupByEmail",
    "users.profile.get",
    "conversations.replies",
    "conversations.history",
    "conversations.info",
    "conversations.list",
    "conversations.members",
    "team.info",
    "bots.info",
}
_FORM_FAMILIES = ("reactions.", "pins.", "stars.")


class WebClient:
    def __init__(self, token=None, base_url="https://slack.com/api/", timeout=30, headers=None, **kwargs):
        self.token, self.base_url, self.timeout = token, base_url, timeout
        self.headers = headers or {}

    def api_call(self, api_method, *, http_verb="POST", params=None, json=None, data=None):
        url = self.base_url + api_method
        headers = {"Authorization": f"Bearer {self.token}", **self.headers}
        body = None
        if params:
            url += "?" + urllib.parse.urlencode(params)
        if json is not None:
            body = _json_bytes(json)
            headers["Content-Type"] = "application/json;charset=utf-8"
        elif data is not None:
            body = urllib.parse.urlencode(data).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(url, data=body, headers=headers, method=http_verb)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as r:
                status, raw, got = r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            status, raw, got = e.code, e.read(), dict(e.headers)
        try:
            parsed = _json_loads(raw or b"{}")
        except ValueError:
            parsed = {"ok": False, "error": raw.decode(errors="replace")}
        response = SlackResponse(
            client=self,
            http_verb=http_verb,
            api_url=url,
            req_args={"params": params, "json": json, "data": data},
            data=parsed,
            headers=got,
            status_code=status,
        )
        return response.validate()

    def __getattr__(self, name):
        if name.startswith("_") or "_" not in name:
            raise AttributeError(name)
        api_method = name.replace("_", ".")

        def call(**kwargs):
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            if api_method in _GET:
                return self.api_call(api_method, http_verb="GET", params=_flat(kwargs))
            if api_method.startswith(_FORM_FAMILIES):
                return self.api_call(api_method, data=_flat(kwargs))
            return self.api_call(api_method, json=kwargs)

        call.__name__ = name
        return call


def _flat(kwargs):
    return {k: (",".join(v) if isinstance(v, list | tuple) else v) for k, v in kwargs.items()}


def _json_bytes(value):
    return json.dumps(value).encode()


def _json_loads(raw):
    return json.loads(raw)
