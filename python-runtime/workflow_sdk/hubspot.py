"""`autokitteh.hubspot.hubspot_client`: a `hubspot.HubSpot` client.

AutoKitteh connects HubSpot with OAuth only (`<connection>__oauth_AccessToken`, refreshed through
the service once it expires). Hookline also takes a private app's access token,
`<connection>__private_app_token`, which needs no OAuth.
"""

import datetime

from .connections import (
    authorize_command,
    authorize_first,
    base_url,
    check_connection_name,
    import_package,
    refresh_oauth,
    var,
)
from .errors import ConnectionInitError
from .google import go_time

__all__ = ["hubspot_client"]


def hubspot_client(connection, **kwargs):
    """`HubSpot(access_token=…, **kwargs)`; with `<connection>__base_url` (Hookline) as its `host`."""
    check_connection_name(connection)
    token = var(connection, "private_app_token")
    if token is None:
        if var(connection, "oauth_RefreshToken") is None and var(connection, "auth_type") is None:
            raise ConnectionInitError(
                connection,
                f"set {connection}__private_app_token (cli var set --secret), or authorize the "
                f"connection: {authorize_command(connection)}",
            )
        token = _oauth_token(connection)
    hubspot = import_package(connection, "hubspot", "hubspot-api-client")
    override = base_url(connection)
    if override:
        kwargs.setdefault("host", override.rstrip("/"))
    return hubspot.HubSpot(access_token=token, **kwargs)


def _oauth_token(connection):
    """The access token of an OAuth set-up (`<connection>__oauth_AccessToken`), refreshed through
    the service when it has expired or its expiry is not known."""
    token = var(connection, "oauth_AccessToken")
    if token is None:
        raise authorize_first(connection)
    expiry = go_time(var(connection, "oauth_Expiry"))
    if expiry is None or expiry <= datetime.datetime.now(datetime.UTC).replace(tzinfo=None):
        token, _ = refresh_oauth("hubspot", connection)
    return token
