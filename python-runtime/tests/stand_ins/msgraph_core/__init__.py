"""Test stand-in for msgraph-core (see ../README.md): `AzureIdentityAuthenticationProvider`,
which gives a bearer token only to requests for its allowed hosts, as msgraph-core's does."""

from urllib.parse import urlsplit

GRAPH_HOSTS = ["graph.microsoft.com", "graph.microsoft.us", "microsoftgraph.chinacloudapi.cn"]


class AzureIdentityAuthenticationProvider:
    def __init__(self, credentials, options=None, scopes=None, allowed_hosts=None):
        self.credentials, self.scopes = credentials, scopes or ["https://graph.microsoft.com/.default"]
        self.allowed_hosts = GRAPH_HOSTS if allowed_hosts is None else allowed_hosts

    def headers_for(self, url):
        if urlsplit(url).hostname not in self.allowed_hosts:
            return {}
        return {"Authorization": "Bearer " + self.credentials.get_token(*self.scopes).token}
