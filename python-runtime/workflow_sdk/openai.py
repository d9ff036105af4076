"""`autokitteh.openai.openai_client`: an `openai.OpenAI` client from `<connection>__apiKey`.

`apiKey` is the name AutoKitteh's ChatGPT connection saves; `<connection>__api_key`, the name
this SDK read before, is taken when `apiKey` is not set.
"""

from .connections import base_url, check_connection_name, import_package, require
from .errors import ConnectionNotSupportedError

__all__ = ["openai_client", "openai_pydantic_ai_provider"]


def openai_client(connection):
    """`OpenAI(api_key=<connection>__apiKey)`, at `<connection>__base_url` when set (Hookline)."""
    check_connection_name(connection)
    api_key = require(connection, "apiKey", "api_key")
    openai = import_package(connection, "openai", "openai")
    override = base_url(connection)
    return openai.OpenAI(api_key=api_key, **({"base_url": override} if override else {}))


def openai_pydantic_ai_provider(connection, **kwargs):
    """AutoKitteh's Pydantic AI provider: not supported by this service yet (make pydantic-ai's
    provider from the connection's vars, `os.environ["<connection>__…"]`)."""
    raise ConnectionNotSupportedError("autokitteh.openai.openai_pydantic_ai_provider", connection)
