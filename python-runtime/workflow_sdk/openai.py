"""`autokitteh.openai.openai_client`: an `openai.OpenAI` client from `<connection>__apiKey`.

`apiKey` is the name AutoKitteh's ChatGPT connection saves; `<connection>__api_key`, the name
this SDK read before, is taken when `apiKey` is not set.
"""

from .connections import base_url, check_connection_name, import_package, require

__all__ = ["openai_client"]


def openai_client(connection):
    """`OpenAI(api_key=<connection>__apiKey)`, at `<connection>__base_url` when set (Hookline)."""
    check_connection_name(connection)
    api_key = require(connection, "apiKey", "api_key")
    openai = import_package(connection, "openai", "openai")
    override = base_url(connection)
    return openai.OpenAI(api_key=api_key, **({"base_url": override} if override else {}))
