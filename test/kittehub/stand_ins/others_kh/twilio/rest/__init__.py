"""Client: `messages.create` POSTs to api.twilio.com through `http_client`, as twilio's does."""

import json
from types import SimpleNamespace

from ..base.exceptions import TwilioRestException
from ..http.http_client import TwilioHttpClient


class _Messages:
    def __init__(self, client):
        self._client = client

    def create(self, to, from_=None, body=None, **kwargs):
        c = self._client
        url = f"https://api.twilio.com/2010-04-01/Accounts/{c.account_sid}/Messages.json"
        data = {"To": to, "From": from_, "Body": body}
        r = c.http_client.request("POST", url, data=data, auth=(c.username, c.password))
        answer = json.loads(r.text or "{}")
        if r.status_code >= 400:
            raise TwilioRestException(
                r.status_code, url, answer.get("message", ""), answer.get("code"), "POST"
            )
        return SimpleNamespace(**answer)


class Client:
    def __init__(
        self, username=None, password=None, account_sid=None, region=None, http_client=None, **kwargs
    ):
        self.username, self.password = username, password
        self.account_sid = account_sid or username
        self.http_client = http_client or TwilioHttpClient()
        self.messages = _Messages(self)
