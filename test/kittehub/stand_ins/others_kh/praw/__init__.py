"""Kittehub stand-in for praw 7 (never shipped): `Reddit(client_id, client_secret, user_agent,
[username, password], oauth_url=…, reddit_url=…)` with `subreddit(name).submit(…)`
(POST /api/submit), `submission(id=…)` (lazily GET /comments/{id}/) and its `reply(text)`
(POST /api/comment), form-encoded with a bearer token asked at `<reddit_url>/api/v1/access_token`
as praw does; Reddit's `json.errors` raise `praw.exceptions.RedditAPIException`."""

import base64

from standin_http import call as request

from .exceptions import RedditAPIException


class Reddit:
    def __init__(self, **settings):
        self.config = {"oauth_url": "https://oauth.reddit.com", "reddit_url": "https://www.reddit.com"}
        self.config.update(settings)
        self.read_only = "username" not in settings
        self._token = None

    def _auth(self):
        if self._token is None:
            c = self.config
            basic = base64.b64encode(f"{c['client_id']}:{c['client_secret']}".encode()).decode()
            form = {"grant_type": "client_credentials"}
            if not self.read_only:
                form = {"grant_type": "password", "username": c["username"], "password": c["password"]}
            headers = {"Authorization": f"Basic {basic}", "User-Agent": c["user_agent"]}
            url = f"{c['reddit_url']}/api/v1/access_token"
            self._token = request("POST", url, headers, form=form)[1]["access_token"]
        return {"Authorization": f"bearer {self._token}", "User-Agent": self.config["user_agent"]}

    def _call(self, method, path, form=None, params=None):
        params = {"raw_json": 1, **(params or {})}
        status, answer = request(
            method, self.config["oauth_url"] + path, self._auth(), form=form, params=params
        )
        if status >= 400:
            raise RedditAPIException([["HTTP", str(status), path]])
        errors = (answer.get("json") or {}).get("errors") if isinstance(answer, dict) else None
        if errors:
            raise RedditAPIException(errors)
        return answer

    def subreddit(self, display_name):
        return Subreddit(self, display_name)

    def submission(self, id=None, url=None):
        return Submission(self, id=id)


class Subreddit:
    def __init__(self, reddit, display_name):
        self._reddit, self.display_name = reddit, display_name

    def submit(self, title, selftext=None, url=None, flair_id=None, flair_text=None, **kwargs):
        form = {
            "sr": self.display_name,
            "title": title,
            "api_type": "json",
            "resubmit": True,
            "sendreplies": True,
            "nsfw": False,
            "spoiler": False,
            "validate_on_submit": True,
        }
        form.update({"kind": "self", "text": selftext or ""} if url is None else {"kind": "link", "url": url})
        if flair_id is not None:
            form["flair_id"] = flair_id
        data = self._reddit._call("POST", "/api/submit/", form=form)["json"]["data"]
        return Submission(self._reddit, id=data["id"], url=data.get("url"))


class Submission:
    def __init__(self, reddit, id, **known):
        self._reddit, self.id = reddit, id
        self.__dict__.update({k: v for k, v in known.items() if v is not None})
        self.fullname = f"t3_{id}"

    def __getattr__(self, name):
        if name.startswith("_") or self.__dict__.get("_fetched"):
            raise AttributeError(name)
        listing = self._reddit._call(
            "GET", f"/comments/{self.id}/", params={"limit": 2048, "sort": "confidence"}
        )
        for key, value in listing[0]["data"]["children"][0]["data"].items():
            self.__dict__.setdefault(key, value)
        self.__dict__["_fetched"] = True
        return getattr(self, name)

    def reply(self, body):
        form = {"thing_id": self.fullname, "text": body, "api_type": "json"}
        data = self._reddit._call("POST", "/api/comment/", form=form)["json"]["data"]
        return Comment(**data["things"][0]["data"])


class Comment:
    def __init__(self, **data):
        self.__dict__.update(data)
