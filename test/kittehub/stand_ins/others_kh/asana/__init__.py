"""Kittehub stand-in for asana 5 (never shipped): `Configuration`, `ApiClient`, and the
`TasksApi` calls samples/asana makes, sent as asana 5 sends them (a bearer token, JSON
`{"data": …}` bodies, `opt_fields` in the query); each returns the answer's `data` dict."""

from standin_http import call as request


class ApiException(Exception):
    def __init__(self, status, body):
        super().__init__(f"({status}) {body}")
        self.status, self.body = status, body


class Configuration:
    def __init__(self):
        self.host = "https://app.asana.com/api/1.0"
        self.access_token = ""


class ApiClient:
    def __init__(self, configuration=None):
        self.configuration = configuration or Configuration()

    def call_api(self, method, path, opts=None, body=None):
        c = self.configuration
        params = {k: v for k, v in (opts or {}).items() if v is not None}
        status, answer = request(
            method,
            c.host + path,
            {"Authorization": "Bearer " + c.access_token},
            json_body=body,
            params=params,
        )
        if status >= 400:
            raise ApiException(status, answer)
        return answer["data"]


class TasksApi:
    def __init__(self, api_client=None):
        self.api_client = api_client or ApiClient()

    def create_task(self, body, opts):
        return self.api_client.call_api("POST", "/tasks", opts, body)

    def get_task(self, task_gid, opts):
        return self.api_client.call_api("GET", f"/tasks/{task_gid}", opts)

    def update_task(self, body, task_gid, opts):
        return self.api_client.call_api("PUT", f"/tasks/{task_gid}", opts, body)


class UsersApi:
    def __init__(self, api_client=None):
        self.api_client = api_client or ApiClient()

    def get_user(self, user_gid, opts):
        return self.api_client.call_api("GET", f"/users/{user_gid}", opts)
