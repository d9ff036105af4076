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
    """`LinearSession`, made once `requests` is there (the SDK needs only the standard library),
    as this module's attribute, so pickle finds it by name in any process."""
    made = globals().get("_LinearSession")
    if made is not None:
        return made

    class LinearSession(requests.Session):
        # requests pickles a session's `__attrs__` only: the base URL goes with them.
        __attrs__ = [*requests.Session.__attrs__, "base_url"]

        def __init__(self, override=None):
            super().__init__()
            self.base_url = (override or LINEAR_API).rstrip("/") + "/"

        def request(self, method, url, *args, **kwargs):
            if url.startswith(LINEAR_API):
                url = url[len(LINEAR_API) :].lstrip("/")
            return super().request(method, urljoin(self.base_url, url), *args, **kwargs)

    LinearSession.__module__, LinearSession.__qualname__ = __name__, "LinearSession"
    globals()["_LinearSession"] = LinearSession
    return LinearSession


def __getattr__(name):
    # `LinearSession` for pickle, in a process that has not made a client yet.
    if name == "LinearSession":
        import requests

        return _session_class(requests)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
