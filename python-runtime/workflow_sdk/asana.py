"""`autokitteh.asana.asana_client`: an `asana.ApiClient` from a personal access token.

The variable, as AutoKitteh names it: `<connection>__pat`.
"""

from .connections import authorize_first, base_url, check_connection_name, import_package, is_oauth, require

__all__ = ["asana_client"]


def asana_client(connection):
    """`asana.ApiClient(configuration)` with `configuration.access_token` the PAT; with
    `<connection>__base_url` (Hookline) as `configuration.host`."""
    check_connection_name(connection)
    token = _oauth_token(connection) if is_oauth(connection) else require(connection, "pat")
    asana = import_package(connection, "asana", "asana")
    configuration = asana.Configuration()
    configuration.access_token = token
    override = base_url(connection)
    if override:
        configuration.host = override.rstrip("/")
    return asana.ApiClient(configuration)


def _oauth_token(connection):
    """The access token of an OAuth set-up: not there until the connection is authorized."""
    raise authorize_first(connection)
