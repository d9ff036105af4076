"""Kittehub stand-in for asana 5 (tests only, never shipped): `Configuration`, `ApiClient` and
`TasksApi.create_task(body, opts)`, sent as asana 5 sends it (POST `<host>/tasks`, a bearer
token, the JSON `{"data": …}` body, `opt_fields` in the query); it returns the answer's `data`.
An error status raises `asana.rest.ApiException`, as the real package does."""

import json
import urllib.error
import urllib.parse
import urllib.request

from .rest import ApiException

__all__ = ["ApiClient", "ApiException", "Configuration", "TasksApi"]


class Configuration:
    def __init__(self):
        self.host = "https://app.asana.com/api/1.0"
        self.access_token = ""


class ApiClient:
    def __init__(self, configuration=None):
        self.configuration = configuration or Configuration()

    def call_api(self, method, path, opts=None, body=None):
        c = self.configuration
        url = c.host.rstrip("/") + path
        params = {k: v for k, v in (opts or {}).items() if v is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        headers = {"Authorization": f"Bearer {c.access_token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                return json.loads(res.read() or b"{}").get("data")
        except urllib.error.HTTPError as e:
            raise ApiException(status=e.code, reason=e.reason, body=e.read().decode()) from None


class TasksApi:
    def __init__(self, api_client=None):
        self.api_client = api_client or ApiClient()

    def create_task(self, body, opts):
        return self.api_client.call_api("POST", "/tasks", opts, body)
