"""`autokitteh.reddit.reddit_client`: a `praw.Reddit` client of a Reddit "script" app.

The variables, as AutoKitteh names them: `<connection>__client_id`, `__client_secret`,
`__user_agent`, and optionally `__username` and `__password` (without them the client is
read-only).
"""

from .connections import base_url, check_connection_name, import_package, require, var

__all__ = ["reddit_client"]


def reddit_client(connection):
    """`praw.Reddit(client_id=…, client_secret=…, user_agent=…[, username=…, password=…])`.

    With `<connection>__base_url` (Hookline), both of praw's URLs (`oauth_url`, `reddit_url`,
    where the token is asked for) are it.
    """
    check_connection_name(connection)
    settings = {name: require(connection, name) for name in ("client_id", "client_secret", "user_agent")}
    username, password = var(connection, "username"), var(connection, "password")
    if username and password:
        settings.update(username=username, password=password)
    praw = import_package(connection, "praw", "praw")
    override = base_url(connection)
    if override:
        settings.update(oauth_url=override.rstrip("/"), reddit_url=override.rstrip("/"))
    return praw.Reddit(**settings)
