"""Kittehub stand-in for atlassian-python-api (tests only, never shipped: the local package index
lacks it). `Jira` and `Confluence` take the constructor `autokitteh.atlassian` calls (url,
username + password for Cloud basic auth, or token for a PAT) and send, for the calls the
atlassian-google kittehub projects make, the requests the real package (3.41) sends:

- the generic `get`, `post`, `put` (path joined to the url as the real `url_joiner` joins it:
  a path that starts with `/wiki` under a `.../wiki` url is sent doubled, as the real one is);
- Jira (`rest/api/2`): `issue`, `issue_create`, `create_issue`, `update_issue_field`,
  `issue_add_comment`, `issue_edit_comment`;
- Confluence (`rest/api`): `get_page_labels`, `get_page_by_id`.

An error status raises `requests.exceptions.HTTPError`, as the real package's
`raise_for_status` does; a 204 or empty answer returns None.
"""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

from requests.exceptions import HTTPError


class AtlassianRestAPI:
    def __init__(self, url, username=None, password=None, token=None, cloud=False, **kwargs):
        self.url = url
        self.cloud = cloud
        if token is not None:
            self._auth = f"Bearer {token}"
        else:
            pair = f"{username}:{password}".encode()
            self._auth = f"Basic {base64.b64encode(pair).decode()}"

    @staticmethod
    def url_joiner(url, path):
        return "/".join(str(s).strip("/") for s in (url, path) if s is not None)

    def request(self, method, path, data=None, json_body=None, params=None):
        url = self.url_joiner(self.url, path)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        body = json_body if json_body is not None else data
        raw = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        if isinstance(raw, str):
            raw = raw.encode()
        headers = {"Authorization": self._auth, "Accept": "application/json"}
        if raw is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=raw, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                text = res.read()
        except urllib.error.HTTPError as e:
            raise HTTPError(f"{e.code} {e.read()[:300]!r}", response=None) from None
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text.decode()

    def get(self, path, params=None, **kwargs):
        return self.request("GET", path, params=params)

    def post(self, path, data=None, json=None, params=None, **kwargs):
        return self.request("POST", path, data=data, json_body=json, params=params)

    def put(self, path, data=None, json=None, params=None, **kwargs):
        return self.request("PUT", path, data=data, json_body=json, params=params)


class Jira(AtlassianRestAPI):
    API = "rest/api/2"

    def issue(self, key, fields="*all", expand=None):
        params = {"fields": fields} if fields else {}
        if expand:
            params["expand"] = expand
        return self.get(f"{self.API}/issue/{key}", params=params)

    def issue_create(self, fields):
        return self.post(f"{self.API}/issue", data={"fields": fields})

    def create_issue(self, fields, update_history=False, update=None):
        data = {"fields": fields}
        if update:
            data["update"] = update
        params = {"updateHistory": "true" if update_history else "false"}
        return self.post(f"{self.API}/issue", data=data, params=params)

    def update_issue_field(self, key, fields="*all", notify_users=True):
        params = {"notifyUsers": "true" if notify_users else "false"}
        return self.put(f"{self.API}/issue/{key}", data={"fields": fields}, params=params)

    def issue_add_comment(self, issue_key, comment, visibility=None):
        data = {"body": comment}
        if visibility:
            data["visibility"] = visibility
        return self.post(f"{self.API}/issue/{issue_key}/comment", data=data)

    def issue_edit_comment(self, issue_key, comment_id, comment, visibility=None, notify_users=True):
        data = {"body": comment}
        if visibility:
            data["visibility"] = visibility
        params = {"notifyUsers": "true" if notify_users else "false"}
        return self.put(f"{self.API}/issue/{issue_key}/comment/{comment_id}", data=data, params=params)


class Confluence(AtlassianRestAPI):
    def __init__(self, url, *args, **kwargs):
        if ("atlassian.net" in url or "jira.com" in url) and "/wiki" not in url:
            url = self.url_joiner(url, "/wiki")
        super().__init__(url, *args, **kwargs)

    def get_page_labels(self, page_id, prefix=None, start=None, limit=None):
        params = {k: v for k, v in (("prefix", prefix), ("start", start), ("limit", limit)) if v}
        return self.get(f"rest/api/content/{page_id}/label", params=params)

    def get_page_by_id(self, page_id, expand=None, status=None, version=None):
        params = {k: v for k, v in (("expand", expand), ("status", status), ("version", version)) if v}
        return self.get(f"rest/api/content/{page_id}", params=params)
