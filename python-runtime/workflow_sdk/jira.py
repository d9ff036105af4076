"""`autokitteh.jira`: `jira_client` (the `jira` package's `JIRA`) and `atlassian_jira_client`.

Same variables as `autokitteh.atlassian`: `<connection>__BaseURL` (or `__base_url`, Hookline),
`<connection>__Token` (or `__APIKeyOrPAT`), and `<connection>__Email` for Cloud API tokens.
"""

from .atlassian import _settings
from .atlassian import jira_client as atlassian_jira_client
from .connections import import_package

__all__ = ["atlassian_jira_client", "jira_client"]


def jira_client(connection, **kwargs):
    """`JIRA(url, basic_auth=(email, token))` with an email, else `JIRA(url, token_auth=token)`."""
    url, token, email = _settings(connection, "jira")
    jira = import_package(connection, "jira", "jira")
    if email is None:
        return jira.JIRA(url, token_auth=token, **kwargs)
    return jira.JIRA(url, basic_auth=(email, token), **kwargs)
