"""`autokitteh.discord`: `discord_client` (a `discord.Client`, not yet logged in) and `bot_token`.

The variable, as AutoKitteh names it: `<connection>__BotToken`. A program makes the client, adds
its event handlers, then runs it with `client.run(bot_token(conn))` inside an activity.
"""

from .connections import base_url, check_connection_name, import_package, require

__all__ = ["bot_token", "discord_client"]


def discord_client(connection, intents=None, **kwargs):
    """`discord.Client(intents=intents or Intents.default(), **kwargs)` once the bot token is set.

    With `<connection>__base_url` (Hookline), discord.py's REST base URL (`discord.http.Route.BASE`,
    one for the whole session process) becomes it.
    """
    bot_token(connection)
    discord = import_package(connection, "discord", "discord.py")
    override = base_url(connection)
    if override:
        discord.http.Route.BASE = override.rstrip("/")
    return discord.Client(intents=intents or discord.Intents.default(), **kwargs)


def bot_token(connection):
    """The connection's bot token, `<connection>__BotToken`."""
    check_connection_name(connection)
    return require(connection, "BotToken")
