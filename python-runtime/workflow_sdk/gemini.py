"""`autokitteh.gemini.gemini_client`: a `google.generativeai.GenerativeModel` from `<connection>__api_key`."""

from .connections import base_url, check_connection_name, import_package, require

__all__ = ["gemini_client"]


def gemini_client(connection, **kwargs):
    """`genai.configure(api_key=…)` then `GenerativeModel(**kwargs)`, as AutoKitteh does.

    With `<connection>__base_url` (Hookline), requests go there over REST (`api_endpoint`).
    """
    check_connection_name(connection)
    api_key = require(connection, "api_key")
    genai = import_package(connection, "google.generativeai", "google-generativeai")
    override = base_url(connection)
    extra = {"transport": "rest", "client_options": {"api_endpoint": override}} if override else {}
    genai.configure(api_key=api_key, **extra)
    return genai.GenerativeModel(**kwargs)
