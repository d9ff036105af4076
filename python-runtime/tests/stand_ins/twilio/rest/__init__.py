"""Client: `messages.create` POSTs to api.twilio.com through `http_client`, as twilio's does."""

import json

from ..http.http_client import TwilioHttpClient


class _Messages:
    def __init__(self, client):
        self._client = client

    def create(self, to, from_=None, body=None):
        c = self._client
        url = f"https://api.twilio.com/2010-04-01/Accounts/{c.account_sid}/Messages.json"
        data = {"To": to, "From": from_, "Body": body}
        r = c.http_client.request("POST", url, data=data, auth=(c.username, c.password))
        return json.loads(r.text)


class Client:
    def __init__(self, username=None, password=None, account_sid=None, region=None, http_client=None):
        self.username, self.password = username, password
        self.account_sid = account_sid or username
        self.http_client = http_client or TwilioHttpClient()
        self.messages = _Messages(self)
