"""Test stand-in for praw (see ../README.md): `Reddit(client_id, client_secret, user_agent,
[username, password], oauth_url=…, reddit_url=…)`; `user.me()` asks a token at
`<reddit_url>/api/v1/access_token` (basic auth, the password grant with a username, else
client_credentials), then `GET <oauth_url>/api/v1/me` with it."""

import base64
from types import SimpleNamespace

from standin_http import call


class Reddit:
    def __init__(self, **settings):
        self.config = {"oauth_url": "https://oauth.reddit.com", "reddit_url": "https://www.reddit.com"}
        self.config.update(settings)
        self.read_only = "username" not in settings
        self.user = SimpleNamespace(me=self._me)

    def _token(self):
        c = self.config
        basic = base64.b64encode(f"{c['client_id']}:{c['client_secret']}".encode()).decode()
        form = {"grant_type": "client_credentials"}
        if not self.read_only:
            form = {"grant_type": "password", "username": c["username"], "password": c["password"]}
        headers = {"Authorization": f"Basic {basic}", "User-Agent": c["user_agent"]}
        return call("POST", f"{c['reddit_url']}/api/v1/access_token", headers, form=form)[1]["access_token"]

    def _me(self):
        headers = {"Authorization": f"bearer {self._token()}", "User-Agent": self.config["user_agent"]}
        return call("GET", f"{self.config['oauth_url']}/api/v1/me", headers)[1]
