"""`autokitteh.zoom.zoom_client`: a `requests` session for Zoom's API (`https://api.zoom.us/v2/`).

The variable, as AutoKitteh names it: `<connection>__oauth_access_token` (AutoKitteh gets it
with OAuth, or for a server-to-server app from its account credentials); see `oauth2_session`.
"""

from .connections import check_connection_name, import_package

__all__ = ["zoom_client"]


def zoom_client(connection):
    """An `OAuth2Session`: `client.get("users/me")` asks `https://api.zoom.us/v2/users/me` (or
    `<connection>__base_url`, Hookline) with the connection's token."""
    check_connection_name(connection)
    import_package(connection, "requests_toolbelt", "requests-toolbelt")
    from .oauth2_session import OAuth2Session

    return OAuth2Session("zoom", connection, base_url="https://api.zoom.us/v2/")
