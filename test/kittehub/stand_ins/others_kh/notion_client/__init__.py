"""Kittehub stand-in for notion-client (never shipped): `Client(auth=…, base_url=…)` with
`pages.create(**body)` (POST /v1/pages) and `pages.retrieve(page_id)` (GET /v1/pages/{id}),
sent with the bearer token and a `Notion-Version`; an error status raises `APIResponseError`."""

from standin_http import call as request

from .errors import APIResponseError


class _Pages:
    def __init__(self, client):
        self._client = client

    def create(self, **body):
        return self._client.request("pages", "POST", body)

    def retrieve(self, page_id, **kwargs):
        return self._client.request(f"pages/{page_id}", "GET")


class Client:
    def __init__(self, options=None, client=None, **kwargs):
        self.options = {"auth": None, "base_url": "https://api.notion.com", **(options or {}), **kwargs}
        self.pages = _Pages(self)

    def request(self, path, method, body=None):
        headers = {"Authorization": f"Bearer {self.options['auth']}", "Notion-Version": "2022-06-28"}
        status, answer = request(method, f"{self.options['base_url']}/v1/{path}", headers, json_body=body)
        if status >= 400:
            answer = answer if isinstance(answer, dict) else {}
            raise APIResponseError(answer.get("message", ""), status, answer.get("code", ""))
        return answer


__all__ = ["APIResponseError", "Client"]
