"""The stand-in API server's presets for code and work trackers: GitHub, Jira and Confluence
(their routes; the table is stand_in_presets.py)."""

from .stand_in_http import Reply


def _github_routes(api):
    def repo(request):
        owner, name = request.params["owner"], request.params["repo"]
        return {
            "id": 1,
            "name": name,
            "full_name": f"{owner}/{name}",
            "owner": {"login": owner, "type": "User"},
            "private": False,
            "default_branch": "main",
            "url": f"{api.url}/repos/{owner}/{name}",
            "html_url": f"https://github.com/{owner}/{name}",
        }

    def issue(request, number=None, title="Stand-in issue"):
        owner, name = request.params["owner"], request.params["repo"]
        number = number or int(request.params["number"])
        return {
            "id": 1000 + number,
            "number": number,
            "title": title,
            "state": "open",
            "body": None,
            "labels": [],
            "user": {"login": "stand-in"},
            "url": f"{api.url}/repos/{owner}/{name}/issues/{number}",
            "html_url": f"https://github.com/{owner}/{name}/issues/{number}",
        }

    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return 201, {**issue(request, api.next_id(), body.get("title", "")), "body": body.get("body")}

    def comment(request):
        cid = api.next_id()
        where = f"{api.url}/repos/{request.params['owner']}/{request.params['repo']}/issues/comments/{cid}"
        return 201, {
            "id": cid,
            "body": (request.json or {}).get("body", ""),
            "user": {"login": "stand-in"},
            "url": where,
        }

    def labels(request):
        given = request.json if isinstance(request.json, list) else (request.json or {}).get("labels", [])
        return [{"name": n, "color": "ededed"} for n in given]

    issues = "/repos/{owner}/{repo}/issues"
    return [
        ("GET", "/user", {"login": "stand-in", "id": 1, "type": "User"}),
        ("GET", "/repos/{owner}/{repo}", repo),
        ("POST", issues, created),
        ("GET", issues + "/{number}", issue),
        ("PATCH", issues + "/{number}", issue),
        ("GET", issues + "/{number}/comments", []),
        ("POST", issues + "/{number}/comments", comment),
        ("POST", issues + "/{number}/labels", labels),
    ]


def _jira_routes(api):
    def created(request):
        fields = (request.json or {}).get("fields") or {}
        project = (fields.get("project") or {}).get("key", "PROJ")
        n = api.next_id()
        return 201, {
            "id": str(10000 + n),
            "key": f"{project}-{n}",
            "self": f"{api.url}/rest/api/2/issue/{10000 + n}",
        }

    def issue(request):
        key = request.params["key"]
        fields = {
            "summary": "Stand-in issue",
            "status": {"name": "To Do"},
            "issuetype": {"name": "Task"},
            "project": {"key": key.split("-")[0]},
            "description": None,
            "comment": {"comments": []},
        }
        return {"id": "10000", "key": key, "self": f"{api.url}/rest/api/2/issue/{key}", "fields": fields}

    def comment(request):
        body = (request.json or {}).get("body", "")
        return 201, {"id": str(20000 + api.next_id()), "body": body}

    routes = []
    for v in ("2", "3"):
        routes += [
            ("POST", f"/rest/api/{v}/issue", created),
            ("GET", f"/rest/api/{v}/issue/{{key}}", issue),
            ("PUT", f"/rest/api/{v}/issue/{{key}}", Reply(204, "")),
            ("POST", f"/rest/api/{v}/issue/{{key}}/comment", comment),
            ("GET", f"/rest/api/{v}/myself", {"accountId": "stand-in", "displayName": "Stand-in"}),
        ]
    return routes


def _confluence_routes(api):
    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        cid = str(30000 + api.next_id())
        return {
            **body,
            "id": cid,
            "type": body.get("type", "page"),
            "status": "current",
            "version": {"number": 1},
            "_links": {"webui": f"/spaces/X/pages/{cid}", "base": api.url + "/wiki"},
        }

    def content(request):
        cid = request.params["id"]
        return {
            "id": cid,
            "type": "page",
            "status": "current",
            "title": "Stand-in page",
            "version": {"number": 1},
            "body": {"storage": {"value": "", "representation": "storage"}},
        }

    return [
        ("GET", "/wiki/rest/api/content", {"results": [], "start": 0, "limit": 25, "size": 0}),
        ("POST", "/wiki/rest/api/content", created),
        ("GET", "/wiki/rest/api/content/{id}", content),
        ("PUT", "/wiki/rest/api/content/{id}", content),
    ]
