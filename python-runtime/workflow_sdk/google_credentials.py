"""Google user credentials whose refresh asks the service (`refresh_oauth`), for `autokitteh.google`.

google-auth drops a credential's `refresh_handler` when it is pickled, and a client's calls run
as activities, their arguments pickled: these credentials keep which connection they refresh
across pickling. This module needs google-auth; `google.py` imports it only for OAuth set-ups.
"""

from google.oauth2 import credentials

from .connections import refresh_oauth

__all__ = ["ServiceCredentials", "ServiceRefresh"]


class ServiceRefresh:
    """google-auth's `refresh_handler`: a fresh token and its expiry from the service."""

    def __init__(self, integration, connection):
        self.integration, self.connection = integration, connection

    def __call__(self, request, scopes=None):
        return refresh_oauth(self.integration, self.connection)


class ServiceCredentials(credentials.Credentials):
    """`Credentials(token, expiry, scopes)` of `connection`, refreshed through the service."""

    def __init__(self, token, expiry, scopes, integration, connection):
        super().__init__(token=token, expiry=expiry, scopes=scopes)
        self._hookline_connection = (integration, connection)
        self.refresh_handler = ServiceRefresh(integration, connection)

    def __getstate__(self):
        state = super().__getstate__()
        state["_hookline_connection"] = self._hookline_connection
        return state

    def __setstate__(self, state):
        which = state.pop("_hookline_connection")
        super().__setstate__(state)
        self._hookline_connection = which
        self.refresh_handler = ServiceRefresh(*which)
