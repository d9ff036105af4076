"""Test stand-in for auth0-python 4 (see ../../README.md): `Auth0(domain, token)` whose endpoints
each build `<protocol>://<domain>/api/v2/…` (`roles.add_users`, `users.list`)."""

from standin_http import call


class _Endpoint:
    path = ""

    def __init__(self, domain, token, telemetry=True, timeout=5.0, protocol="https", rest_options=None):
        self.domain, self.protocol, self._token = domain, protocol, token

    def _call(self, method, tail="", **kwargs):
        url = f"{self.protocol}://{self.domain}/api/v2/{self.path}{tail}"
        return call(method, url, {"Authorization": f"Bearer {self._token}"}, **kwargs)[1]


class Roles(_Endpoint):
    path = "roles"

    def add_users(self, id, users):
        return self._call("POST", f"/{id}/users", json_body={"users": users})


class Users(_Endpoint):
    path = "users"

    def list(self, page=0, per_page=25, q=None, search_engine=None):
        params = {"page": page, "per_page": per_page, "q": q or "", "search_engine": search_engine or ""}
        return self._call("GET", params=params)


class Auth0:
    def __init__(self, domain, token, rest_options=None):
        self.roles = Roles(domain, token, rest_options=rest_options)
        self.users = Users(domain, token, rest_options=rest_options)
