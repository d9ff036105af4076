"""`autokitteh.atlassian`: Jira and Confluence clients (atlassian-python-api) from a token.

Variables, as AutoKitteh names them: `<connection>__BaseURL` (the site, e.g.
`https://example.atlassian.net`; `<connection>__base_url` wins when set, Hookline),
`<connection>__Token` (AutoKitteh's older name `__APIKeyOrPAT` works too) and, for Atlassian
Cloud API tokens, `<connection>__Email`. OAuth connections are not supported here.
"""

from .connections import base_url, check_connection_name, import_package, require, var
from .errors import ConnectionInitError

__all__ = ["confluence_client", "get_base_url", "jira_client"]


def _settings(connection):
    check_connection_name(connection)
    if var(connection, "oauth_AccessToken") and not (
        var(connection, "Token") or var(connection, "APIKeyOrPAT")
    ):
        raise ConnectionInitError(
            connection, f"OAuth connections are not supported by this service; set {connection}__Token"
        )
    token = require(connection, "Token", "APIKeyOrPAT")
    url = base_url(connection) or var(connection, "BaseURL")
    if url is None:
        raise ConnectionInitError(connection, f"set {connection}__BaseURL (your Atlassian site's URL)")
    return url, token, var(connection, "Email")


def _client(cls, url, token, email, kwargs):
    if email is None:
        return cls(url=url, token=token, **kwargs)
    return cls(url=url, username=email, password=token, cloud=True, **kwargs)


def jira_client(connection, **kwargs):
    """`atlassian.Jira`: with an email, Cloud basic auth (email + API token); else a PAT."""
    url, token, email = _settings(connection)
    atlassian = import_package(connection, "atlassian", "atlassian-python-api")
    return _client(atlassian.Jira, url, token, email, kwargs)


def confluence_client(connection, **kwargs):
    """`atlassian.Confluence`, authenticated as `jira_client` is."""
    url, token, email = _settings(connection)
    atlassian = import_package(connection, "atlassian", "atlassian-python-api")
    return _client(atlassian.Confluence, url, token, email, kwargs)


def get_base_url(connection):
    """The connection's Atlassian site URL, or None when it is not set."""
    check_connection_name(connection)
    return base_url(connection) or var(connection, "BaseURL") or var(connection, "AccessURL")
