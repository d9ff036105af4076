"""`autokitteh.oauth2_session.OAuth2Session`: a `requests` session with a connection's OAuth token.

As AutoKitteh's: a requests-toolbelt `BaseUrlSession` (relative URLs resolve against its
`base_url`) that sends `Authorization: Bearer <connection>__oauth_access_token`; when the
connection also has `<connection>__oauth_refresh_token`, a 401 answer refreshes the token
(`connections.refresh_oauth`) and sends the request once more. `<connection>__base_url`
(Hookline) replaces the `base_url` given. This module needs requests-toolbelt (AutoKitteh's
does too); the helpers that use it import it only when called.
"""

from requests_toolbelt import sessions

from .connections import authorize_first, base_url, check_connection_name, refresh_oauth, var

__all__ = ["OAuth2Session"]


class OAuth2Session(sessions.BaseUrlSession):
    """`OAuth2Session(integration, connection, base_url=…)`: raises ConnectionInitError naming
    `cli connection authorize` while the connection has no access token."""

    # requests pickles a session's `__attrs__` only: the base URL and the connection go with them.
    __attrs__ = [
        *sessions.BaseUrlSession.__attrs__,
        "base_url",
        "_integration",
        "_connection",
        "_refresh_token",
    ]

    def __init__(self, integration, connection, *args, **kwargs):
        check_connection_name(connection)
        if base_url(connection):
            kwargs["base_url"] = base_url(connection).rstrip("/") + "/"
        super().__init__(*args, **kwargs)
        self._integration, self._connection = integration, connection
        self._refresh_token = var(connection, "oauth_refresh_token")
        self._set_token(var(connection, "oauth_access_token") or _oauth_token(integration, connection))
        self.hooks["response"].append(self._intercept)

    def _intercept(self, r, *args, **kwargs):
        if not self._refresh_token or r.status_code != 401:
            return r
        token, _ = refresh_oauth(self._integration, self._connection)
        self._set_token(token)
        r.request.headers["Authorization"] = f"Bearer {token}"
        return self.send(r.request)

    def _set_token(self, token):
        self.headers["Authorization"] = f"Bearer {token}"


def _oauth_token(integration, connection):
    """The access token of a connection that has none yet: it must be authorized first."""
    raise authorize_first(connection)
