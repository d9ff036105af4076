"""Test stand-in for slack_sdk (see ../README.md): only what autokitteh.slack uses."""

from .web.client import WebClient

__all__ = ["WebClient"]
