"""`autokitteh.slack`: `slack_client` (a `slack_sdk.WebClient`) and `normalize_channel_name`.

>>> normalize_channel_name("  Q3 'Launch' -- War Room!  ")
'q3-launch-war-room'
"""

import re

from .connections import base_url, check_connection_name, import_package, require, var

__all__ = ["normalize_channel_name", "slack_client"]

# The token variables in AutoKitteh's order: OAuth v2 install, then the app's own bot token
# (the last two are AutoKitteh's older names).
TOKEN_VARS = ("oauth_access_token", "private_bot_token", "oauth_AccessToken", "BotToken")


def slack_client(connection, **kwargs):
    """A `slack_sdk.WebClient` with the connection's bot token, checked with `auth.test` first.

    The token: `<connection>__oauth_access_token`, else `<connection>__private_bot_token`. The API
    URL: `<connection>__base_url` (Hookline) when set. A bad token raises slack_sdk's
    `SlackApiError` here, as in AutoKitteh. Keyword arguments go to `WebClient(...)`.
    """
    check_connection_name(connection)
    token = next(filter(None, (var(connection, n) for n in TOKEN_VARS)), None) or require(
        connection, *TOKEN_VARS[:2]
    )
    web = import_package(connection, "slack_sdk.web.client", "slack-sdk")
    override = base_url(connection)
    if override:
        kwargs["base_url"] = override if override.endswith("/") else override + "/"
    client = web.WebClient(token, **kwargs)
    client.auth_test().validate()
    return client


_QUOTES = re.compile(r"['\"]")
_INVALID = re.compile(r"[^a-z0-9_-]")
_RUNS = re.compile(r"[_-]{2,}")


def normalize_channel_name(name):
    """Arbitrary text as a valid Slack channel name: lower case, `a-z 0-9 _ -`, at most 50 long.

    Quotes go, other characters become `-`, a run of separators becomes one `-`, and one
    leading and one trailing `-` are dropped (as AutoKitteh does).
    """
    name = _QUOTES.sub("", name.lower().strip())
    name = _RUNS.sub("-", _INVALID.sub("-", name))[:50]
    if name.startswith("-"):
        name = name[1:]
    if name.endswith("-"):
        name = name[:-1]
    return name
