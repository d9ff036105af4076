"""SlackResponse: the parsed answer, as slack_sdk's (dict-like, `validate` raises)."""

from ..errors import SlackApiError


class SlackResponse:
    def __init__(
        self,
        *,
        client=None,
        http_verb="POST",
        api_url="",
        req_args=None,
        data=None,
        headers=None,
        status_code=200,
    ):
        self._client, self.http_verb, self.api_url = client, http_verb, api_url
        self.req_args, self.data = req_args or {}, data if data is not None else {}
        self.headers, self.status_code = headers or {}, status_code

    def __str__(self):
        return str(self.data)

    def __getitem__(self, key):
        return self.data[key]

    def __contains__(self, key):
        return key in self.data

    def get(self, key, default=None):
        return self.data.get(key, default) if isinstance(self.data, dict) else default

    def validate(self):
        if self.status_code == 200 and isinstance(self.data, dict) and self.data.get("ok", False):
            return self
        raise SlackApiError(f"The request to the Slack API failed. (url: {self.api_url})", self)
