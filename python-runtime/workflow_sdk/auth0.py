"""`autokitteh.auth0.auth0_client`: an `auth0.management.Auth0` (auth0-python) client.

The variables, as AutoKitteh names them: `<connection>__auth0_domain` (`example.us.auth0.com`)
and `<connection>__oauth_AccessToken`, a Management API token. AutoKitteh gets that token with
OAuth from the connection's `client_id` and `client_secret`; a token pasted into the var works
here too.
"""

from urllib.parse import urlsplit

from .connections import authorize_first, base_url, check_connection_name, import_package, require, var

__all__ = ["auth0_client"]


def auth0_client(connection, **kwargs):
    """`Auth0(domain, token, **kwargs)`. With `<connection>__base_url` (Hookline) every endpoint
    calls that URL's scheme and host instead of `https://<domain>`."""
    check_connection_name(connection)
    domain = require(connection, "auth0_domain")
    oauth = var(connection, "oauth_AccessToken") is None and var(connection, "client_id") is not None
    token = _oauth_token(connection) if oauth else require(connection, "oauth_AccessToken")
    management = import_package(connection, "auth0.management", "auth0-python")
    override = base_url(connection)
    if not override:
        return management.Auth0(domain, token, **kwargs)
    parts = urlsplit(override)
    client = management.Auth0(parts.netloc, token, **kwargs)
    for endpoint in vars(client).values():
        if hasattr(endpoint, "protocol"):
            endpoint.protocol = parts.scheme
    return client


def _oauth_token(connection):
    """The Management API token of an OAuth set-up: not there until the connection is authorized."""
    raise authorize_first(connection)
