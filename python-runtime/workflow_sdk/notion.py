"""`autokitteh.notion.notion_client`: a `notion_client.Client`.

The variables, in AutoKitteh's order: `<connection>__api_key` (an internal integration's secret),
else `<connection>__oauth_access_token` (a public integration's token, which does not expire).
"""

from .connections import authorize_first, base_url, check_connection_name, import_package, is_oauth, var
from .errors import ConnectionInitError

__all__ = ["notion_client"]


def notion_client(connection):
    """`Client(auth=<token>)`; with `<connection>__base_url` (Hookline) as its `base_url`."""
    check_connection_name(connection)
    token = var(connection, "api_key") or var(connection, "oauth_access_token")
    if token is None:
        if is_oauth(connection):
            token = _oauth_token(connection)
        else:
            raise ConnectionInitError(
                connection,
                f"set {connection}__api_key or {connection}__oauth_access_token (cli var set --secret)",
            )
    notion = import_package(connection, "notion_client", "notion-client")
    override = base_url(connection)
    return notion.Client(auth=token, **({"base_url": override.rstrip("/")} if override else {}))


def _oauth_token(connection):
    """The access token of an OAuth set-up: not there until the connection is authorized."""
    raise authorize_first(connection)
