"""`autokitteh.confluence`: the Confluence client of `autokitteh.atlassian`, under the
integration's own name.

`confluence_client(connection, **kwargs)` is `autokitteh.atlassian.confluence_client`: an
`atlassian.Confluence` from the connection's `BaseURL`, `Token` and `Email` (an API token), a
PAT, or an OAuth authorization (`oauth_AccessToken`, `AccessID`).
"""

from .atlassian import confluence_client, get_base_url

__all__ = ["confluence_client", "get_base_url"]
