"""slack_sdk.web: `WebClient`, `SlackResponse`."""

from .client import WebClient
from .slack_response import SlackResponse

__all__ = ["SlackResponse", "WebClient"]
