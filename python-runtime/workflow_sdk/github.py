"""`autokitteh.github.github_client`: a PyGithub client from a connection's personal access token.

>>> import os; os.environ["gh__pat"] = "ghp_example"
>>> github_client("gh").requester.base_url  # doctest: +SKIP
'https://api.github.com'
"""

import os
from urllib.parse import urljoin

from .connections import base_url, check_connection_name, import_package, require, var
from .errors import ConnectionInitError

__all__ = ["github_client"]


def github_client(connection, **kwargs):
    """A `github.Github` client authenticated with `Auth.Token(<connection>__pat)`.

    The API URL: `<connection>__base_url` as is (Hookline); else GitHub Enterprise Server's
    `<connection>__enterprise_url` (or `GITHUB_ENTERPRISE_URL`) + `api/v3`, as AutoKitteh does;
    else github.com. Keyword arguments go to `Github(...)`.
    """
    check_connection_name(connection)
    if var(connection, "pat") is None and var(connection, "app_id") is not None:
        raise ConnectionInitError(
            connection,
            f"GitHub App connections are not supported by this service; set {connection}__pat "
            "(a personal access token) instead",
        )
    pat = require(connection, "pat")
    github = import_package(connection, "github", "PyGithub")
    override = base_url(connection)
    enterprise = var(connection, "enterprise_url") or os.environ.get("GITHUB_ENTERPRISE_URL")
    if override:
        kwargs["base_url"] = override.rstrip("/")
    elif enterprise:
        kwargs["base_url"] = urljoin(enterprise, "api/v3")
    return github.Github(auth=github.Auth.Token(pat), **kwargs)
