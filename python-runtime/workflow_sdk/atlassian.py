"""`autokitteh.atlassian`: Jira and Confluence clients (atlassian-python-api) from a token.

Variables, as AutoKitteh names them: `<connection>__BaseURL` (the site, e.g.
`https://example.atlassian.net`; `<connection>__base_url` wins when set, Hookline),
`<connection>__Token` (AutoKitteh's older name `__APIKeyOrPAT` works too) and, for Atlassian
Cloud API tokens, `<connection>__Email`. A connection authorized with OAuth
(`<connection>__oauth_AccessToken` and the site's cloud id, `__AccessID`) goes through
`https://api.atlassian.com/ex/<jira|confluence>/<AccessID>` with the token as a bearer; the
service refreshes it before each session.
"""

from .connections import base_url, check_connection_name, import_package, require, var
from .errors import ConnectionInitError

__all__ = ["confluence_client", "get_base_url", "jira_client"]

# Where OAuth tokens reach a site: `<ATLASSIAN_API>/ex/jira/<cloud id>`.
ATLASSIAN_API = "https://api.atlassian.com"


def _settings(connection, product):
    check_connection_name(connection)
    oauth = var(connection, "oauth_AccessToken")
    if oauth and not (var(connection, "Token") or var(connection, "APIKeyOrPAT")):
        # Authorized with OAuth: the site's API through api.atlassian.com, by its cloud id.
        cloud = require(connection, "AccessID")
        url = base_url(connection) or f"{ATLASSIAN_API}/ex/{product}/{cloud}"
        return url, oauth, None
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
    url, token, email = _settings(connection, "jira")
    atlassian = import_package(connection, "atlassian", "atlassian-python-api")
    return _client(atlassian.Jira, url, token, email, kwargs)


def confluence_client(connection, **kwargs):
    """`atlassian.Confluence`, authenticated as `jira_client` is."""
    url, token, email = _settings(connection, "confluence")
    atlassian = import_package(connection, "atlassian", "atlassian-python-api")
    return _client(atlassian.Confluence, url, token, email, kwargs)


def get_base_url(connection):
    """The connection's Atlassian site URL, or None when it is not set."""
    check_connection_name(connection)
    return base_url(connection) or var(connection, "BaseURL") or var(connection, "AccessURL")
