"""Stand-in slack_sdk (see ../README.md): `WebClient` and `errors.SlackApiError`."""

from .web.client import WebClient
from .web.slack_response import SlackResponse

__all__ = ["SlackResponse", "WebClient"]
