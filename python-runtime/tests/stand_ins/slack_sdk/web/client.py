"""WebClient: POSTs JSON to `<base_url><method>` with the bot token, as slack_sdk does."""

import json
import urllib.request

from ..errors import SlackApiError


class SlackResponse:
    def __init__(self, data):
        self.data = data

    def __getitem__(self, key):
        return self.data[key]

    def validate(self):
        if not self.data.get("ok"):
            raise SlackApiError(f"The request to the Slack API failed: {self.data}", self)
        return self


class WebClient:
    def __init__(self, token=None, base_url="https://slack.com/api/", timeout=30):
        self.token, self.base_url, self.timeout = token, base_url, timeout

    def api_call(self, method, json_body=None):
        request = urllib.request.Request(
            self.base_url + method,
            data=json.dumps(json_body or {}).encode(),
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json; charset=utf-8",
            },
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=self.timeout) as r:
            return SlackResponse(json.loads(r.read()))

    def auth_test(self, **kwargs):
        return self.api_call("auth.test", kwargs)

    def chat_postMessage(self, *, channel, text=None, thread_ts=None, **kwargs):
        body = {"channel": channel, "text": text, **kwargs}
        if thread_ts is not None:
            body["thread_ts"] = thread_ts
        return self.api_call("chat.postMessage", body).validate()
