"""Test stand-in for discord.py (see ../README.md): `Intents`, and a `Client` whose `login(token)`
asks `GET <Route.BASE>/users/@me` with `Authorization: Bot <token>`, as discord.py's does."""

from . import http
from .http import Route


class Intents:
    def __init__(self, **flags):
        self.__dict__.update(flags)

    @classmethod
    def default(cls):
        return cls(message_content=False, guilds=True)


class Client:
    def __init__(self, *, intents, **options):
        self.intents, self.options, self.user = intents, options, None

    async def login(self, token):
        self.user = http.get(Route("GET", "/users/@me"), token)


__all__ = ["Client", "Intents", "http"]
