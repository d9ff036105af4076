"""Test stand-in for msgraph-sdk (see ../README.md): `GraphServiceClient(credentials=…,
scopes=…, request_adapter=…)`, `GraphRequestAdapter(auth_provider)` with its `base_url`
(Graph v1.0 when unset), and `await client.users.get()`."""

from types import SimpleNamespace

from msgraph_core import AzureIdentityAuthenticationProvider
from standin_http import call


class GraphRequestAdapter:
    def __init__(self, auth_provider, client=None):
        self.auth_provider, self.base_url = auth_provider, ""

    async def get(self, path):
        url = self.base_url + path
        return call("GET", url, self.auth_provider.headers_for(url))[1]


class GraphServiceClient:
    def __init__(self, credentials=None, scopes=None, request_adapter=None):
        if request_adapter is None:
            if not credentials:
                raise ValueError("Missing request adapter or valid credentials")
            request_adapter = GraphRequestAdapter(
                AzureIdentityAuthenticationProvider(credentials, scopes=scopes)
            )
        if not request_adapter.base_url:
            request_adapter.base_url = "https://graph.microsoft.com/v1.0"
        self.request_adapter = request_adapter
        self.users = SimpleNamespace(get=lambda: request_adapter.get("/users"))
