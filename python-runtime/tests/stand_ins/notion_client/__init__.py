"""Test stand-in for notion-client (see ../README.md): `Client(auth=…, base_url=…)` and
`pages.create(**body)`, POSTed to `<base_url>/v1/pages` with the bearer token and a
`Notion-Version`."""

from standin_http import call

from .errors import APIResponseError


class _Pages:
    def __init__(self, client):
        self._client = client

    def create(self, **body):
        return self._client.request("pages", "POST", body)


class Client:
    def __init__(self, options=None, client=None, **kwargs):
        self.options = {"auth": None, "base_url": "https://api.notion.com", **(options or {}), **kwargs}
        self.pages = _Pages(self)

    def request(self, path, method, body=None):
        headers = {"Authorization": f"Bearer {self.options['auth']}", "Notion-Version": "2022-06-28"}
        status, answer = call(method, f"{self.options['base_url']}/v1/{path}", headers, json_body=body)
        if status >= 400:
            raise APIResponseError(answer.get("message", ""))
        return answer


__all__ = ["APIResponseError", "Client"]
