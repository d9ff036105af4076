"""`autokitteh.telegram.telegram_client`: a `telegram.Bot` (python-telegram-bot).

The variable, as AutoKitteh names it: `<connection>__BotToken`.
"""

from .connections import base_url, check_connection_name, import_package, require

__all__ = ["telegram_client"]


def telegram_client(connection):
    """`Bot(token=<BotToken>)`; with `<connection>__base_url` (Hookline), the Bot API calls go to
    `<base_url>/bot<token>/<method>`."""
    check_connection_name(connection)
    token = require(connection, "BotToken")
    telegram = import_package(connection, "telegram", "python-telegram-bot")
    override = base_url(connection)
    if override:
        return telegram.Bot(token=token, base_url=override.rstrip("/") + "/bot")
    return telegram.Bot(token=token)
