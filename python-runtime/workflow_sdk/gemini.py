"""`autokitteh.gemini.gemini_client`: AutoKitteh's older place for `autokitteh.google.gemini_client`."""

from .google import gemini_client

__all__ = ["gemini_client"]
