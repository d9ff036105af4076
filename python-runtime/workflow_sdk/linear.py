"""`autokitteh.linear.linear_client`: a `requests.Session` for Linear's GraphQL API.

`<connection>__api_key` (sent as is in `Authorization`, as Linear wants API keys), else
`<connection>__oauth_access_token` (sent as `Bearer`). Relative URLs resolve against the base URL
(`https://api.linear.app/graphql/`, or `<connection>__base_url`); with `<connection>__base_url`
set (Hookline), a URL under `https://api.linear.app/graphql` goes under it instead.
"""

from urllib.parse import urljoin

from .connections import base_url, check_connection_name, import_package, var
from .errors import ConnectionInitError

__all__ = ["linear_client"]

LINEAR_API = "https://api.linear.app/graphql"


def linear_client(connection):
    """A session with the connection's credentials; `client.post("", json={"query": …})` asks Linear."""
    check_connection_name(connection)
    api_key, token = var(connection, "api_key"), var(connection, "oauth_access_token")
    if api_key is None and token is None:
        raise ConnectionInitError(
            connection,
            f"set {connection}__api_key or {connection}__oauth_access_token (cli var set --secret)",
        )
    requests = import_package(connection, "requests", "requests")
    session = _session_class(requests)(base_url(connection))
    session.headers["Authorization"] = api_key if api_key is not None else f"Bearer {token}"
    session.headers["Content-Type"] = "application/json"
    return session


def _session_class(requests):
    class LinearSession(requests.Session):
        def __init__(self, override):
            super().__init__()
            self.base_url = (override or LINEAR_API).rstrip("/") + "/"

        def request(self, method, url, *args, **kwargs):
            if url.startswith(LINEAR_API):
                url = url[len(LINEAR_API) :].lstrip("/")
            return super().request(method, urljoin(self.base_url, url), *args, **kwargs)

    return LinearSession
