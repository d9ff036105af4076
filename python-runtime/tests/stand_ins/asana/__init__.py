"""Test stand-in for asana 5 (see ../README.md): `Configuration` (`host`, `access_token`),
`ApiClient(configuration)` and `UsersApi(api_client).get_user(user_gid, opts)`."""

from standin_http import call


class Configuration:
    def __init__(self):
        self.host = "https://app.asana.com/api/1.0"
        self.access_token = ""


class ApiClient:
    def __init__(self, configuration=None):
        self.configuration = configuration or Configuration()

    def call_api(self, method, path):
        c = self.configuration
        return call(method, c.host + path, {"Authorization": "Bearer " + c.access_token})[1]


class UsersApi:
    def __init__(self, api_client=None):
        self.api_client = api_client or ApiClient()

    def get_user(self, user_gid, opts):
        return self.api_client.call_api("GET", f"/users/{user_gid}")["data"]
