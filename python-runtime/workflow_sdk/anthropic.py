"""`autokitteh.anthropic.anthropic_client`: an `anthropic.Anthropic` client from `<connection>__api_key`."""

from .connections import base_url, check_connection_name, import_package, require
from .errors import ConnectionNotSupportedError

__all__ = ["anthropic_client", "anthropic_pydantic_ai_provider"]


def anthropic_client(connection):
    """`Anthropic(api_key=<connection>__api_key)`, at `<connection>__base_url` when set (Hookline)."""
    check_connection_name(connection)
    api_key = require(connection, "api_key")
    anthropic = import_package(connection, "anthropic", "anthropic")
    override = base_url(connection)
    return anthropic.Anthropic(api_key=api_key, **({"base_url": override} if override else {}))


def anthropic_pydantic_ai_provider(connection, **kwargs):
    """AutoKitteh's Pydantic AI provider: not supported by this service yet (make pydantic-ai's
    provider from the connection's vars, `os.environ["<connection>__…"]`)."""
    raise ConnectionNotSupportedError("autokitteh.anthropic.anthropic_pydantic_ai_provider", connection)
