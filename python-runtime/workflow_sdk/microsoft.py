"""`autokitteh.microsoft.teams_client`: a Microsoft Graph client (`msgraph.GraphServiceClient`).

The variables, as AutoKitteh names them: `<connection>__auth_type` says the set-up. `daemonApp`
(an app with application permissions, no user): `<connection>__private_client_id`, and
`__private_certificate` (PEM, tried first) or `__private_client_secret`, and
`__private_tenant_id` (default `common`), through azure-identity. `oauthDefault` /
`oauthPrivate` (a user's delegated consent): OAuth (`_oauth_credentials`).
"""

import collections
import datetime
from urllib.parse import urlsplit

from .connections import (
    authorize_first,
    base_url,
    check_connection_name,
    import_package,
    refresh_oauth,
    require,
    var,
)
from .errors import ConnectionInitError
from .google import go_time

__all__ = ["teams_client"]


def teams_client(connection, **kwargs):
    """`GraphServiceClient(credentials=…, **kwargs)`. With `<connection>__base_url` (Hookline) the
    Graph calls go there (`request_adapter.base_url`, the token sent to that host only)."""
    check_connection_name(connection)
    auth_type = var(connection, "auth_type")
    if auth_type is None:
        raise ConnectionInitError(
            connection,
            f"set {connection}__auth_type (daemonApp, with {connection}__private_client_id and "
            f"{connection}__private_client_secret; cli var set)",
        )
    if auth_type.startswith("oauth"):
        creds = _oauth_credentials(connection)
    elif auth_type == "daemonApp":
        creds = _daemon_credentials(connection)
    else:
        raise ValueError(f"AutoKitteh connection {connection!r} with invalid auth type {auth_type!r}")
    msgraph = import_package(connection, "msgraph", "msgraph-sdk")
    override = base_url(connection)
    if not override:
        return msgraph.GraphServiceClient(credentials=creds, **kwargs)
    core = import_package(connection, "msgraph_core", "msgraph-sdk")
    provider = core.AzureIdentityAuthenticationProvider(creds, allowed_hosts=[urlsplit(override).hostname])
    adapter = msgraph.GraphRequestAdapter(provider)
    adapter.base_url = override.rstrip("/")
    return msgraph.GraphServiceClient(request_adapter=adapter, **kwargs)


def _daemon_credentials(connection):
    """azure-identity's `CertificateCredential` (a private certificate) or `ClientSecretCredential`."""
    client_id = require(connection, "private_client_id")
    tenant_id = var(connection, "private_tenant_id") or "common"
    certificate = var(connection, "private_certificate")
    secret = None if certificate else require(connection, "private_client_secret")
    identity = import_package(connection, "azure.identity", "azure-identity")
    if certificate:
        return identity.CertificateCredential(
            client_id=client_id, certificate_data=certificate.encode(), tenant_id=tenant_id
        )
    return identity.ClientSecretCredential(client_id=client_id, client_secret=secret, tenant_id=tenant_id)


def _oauth_credentials(connection):
    """A user's delegated OAuth credentials: `<connection>__oauth_access_token`, refreshed
    through the service when it expires (an azure-core `TokenCredential`)."""
    if var(connection, "oauth_access_token") is None:
        raise authorize_first(connection)
    return ServiceTokenCredential(connection)


AccessToken = collections.namedtuple("AccessToken", ["token", "expires_on"])


class ServiceTokenCredential:
    """azure-core's `TokenCredential` protocol over the connection's OAuth token: `get_token`
    answers the stored token, or one the service refreshed once it is (nearly) expired."""

    def __init__(self, connection):
        self.connection = connection

    def get_token(self, *scopes, **kwargs):
        token = var(self.connection, "oauth_access_token")
        expiry = go_time(var(self.connection, "oauth_expiry"))
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        if expiry is None or expiry <= now + datetime.timedelta(minutes=1):
            token, expiry = refresh_oauth("microsoft", self.connection)
        at = expiry or now + datetime.timedelta(hours=1)
        return AccessToken(token, int(at.replace(tzinfo=datetime.UTC).timestamp()))
