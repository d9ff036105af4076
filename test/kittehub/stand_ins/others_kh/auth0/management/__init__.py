"""Kittehub stand-in for auth0-python 4 (never shipped): `Auth0(domain, token)` whose endpoints
each build `<protocol>://<domain>/api/v2/…` with the bearer token: `roles.add_users(id, users)`
(POST roles/{id}/users) and `users.list(page, per_page, q, search_engine, …)` (GET users, the
package's query parameters; `include_totals` true, so the answer is `{"users": […], …}`)."""

from standin_http import call as request


class Auth0Error(Exception):
    def __init__(self, status_code, error_code, message):
        super().__init__(f"{status_code}: {message}")
        self.status_code, self.error_code, self.message = status_code, error_code, message


class _Endpoint:
    path = ""

    def __init__(self, domain, token, telemetry=True, timeout=5.0, protocol="https", rest_options=None):
        self.domain, self.protocol, self._token = domain, protocol, token

    def _call(self, method, tail="", **kwargs):
        url = f"{self.protocol}://{self.domain}/api/v2/{self.path}{tail}"
        status, answer = request(method, url, {"Authorization": f"Bearer {self._token}"}, **kwargs)
        if status >= 400:
            answer = answer if isinstance(answer, dict) else {}
            raise Auth0Error(status, answer.get("errorCode", ""), answer.get("message", ""))
        return answer


class Roles(_Endpoint):
    path = "roles"

    def add_users(self, id, users):
        return self._call("POST", f"/{id}/users", json_body={"users": users})


class Users(_Endpoint):
    path = "users"

    def list(
        self,
        page=0,
        per_page=25,
        sort=None,
        connection=None,
        q=None,
        search_engine=None,
        include_totals=True,
        fields=None,
        include_fields=True,
    ):
        params = {
            "per_page": per_page,
            "page": page,
            "include_totals": str(include_totals).lower(),
            "sort": sort,
            "connection": connection,
            "fields": fields and ",".join(fields),
            "include_fields": str(include_fields).lower(),
            "q": q,
            "search_engine": search_engine,
        }
        return self._call("GET", params={k: v for k, v in params.items() if v is not None})


class Auth0:
    def __init__(self, domain, token, rest_options=None):
        self.roles = Roles(domain, token, rest_options=rest_options)
        self.users = Users(domain, token, rest_options=rest_options)
