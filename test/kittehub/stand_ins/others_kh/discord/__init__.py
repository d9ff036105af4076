"""Kittehub stand-in for discord.py 2 (never shipped). `Client.run(token)` does what the
kittehub projects rely on: logs in (`GET users/@me`), asks for the gateway (`GET gateway/bot`),
fills its cache as the gateway's READY and GUILD_CREATE would (`GET users/@me/guilds`, each
guild's `GET guilds/{id}/channels`: no websocket here), calls `on_ready`, and returns once
`close()` is awaited, as discord.py does. `get_channel` reads the cache, `fetch_channel` asks
`GET channels/{id}`, a channel's `send` POSTs `channels/{id}/messages`."""

import asyncio
from types import SimpleNamespace

from . import http
from .errors import ClientException, DiscordException, Forbidden, HTTPException, NotFound
from .http import Route


class Intents:
    def __init__(self, **flags):
        self.__dict__.update(flags)

    @classmethod
    def default(cls):
        return cls(message_content=False, guilds=True, messages=True)


class ClientUser(SimpleNamespace):
    def __str__(self):
        d = getattr(self, "discriminator", "0")
        return self.username if d in ("0", None) else f"{self.username}#{d}"


class TextChannel:
    def __init__(self, client, data):
        self._client, self._data = client, data
        self.id, self.name = int(data["id"]), data.get("name")

    async def send(self, content=None, **kwargs):
        route = Route("POST", "/channels/{id}/messages", id=self.id)
        return SimpleNamespace(**http.request(route, self._client._token, {"content": content, **kwargs}))


class Client:
    def __init__(self, *, intents, **options):
        self.intents, self.options, self.user, self.guilds = intents, options, None, []
        self._token, self._channels, self._closed = None, {}, None

    def event(self, coro):
        setattr(self, coro.__name__, coro)
        return coro

    async def login(self, token):
        self._token = token
        data = http.get(Route("GET", "/users/@me"), token)
        self.user = ClientUser(**{**data, "id": int(data["id"])})

    async def connect(self):
        http.get(Route("GET", "/gateway/bot"), self._token)
        for guild in http.get(Route("GET", "/users/@me/guilds"), self._token) or []:
            channels = [
                TextChannel(self, c)
                for c in http.get(Route("GET", "/guilds/{id}/channels", id=guild["id"]), self._token)
            ]
            self._channels.update({c.id: c for c in channels})
            self.guilds.append(
                SimpleNamespace(id=int(guild["id"]), name=guild.get("name"), channels=channels)
            )

    async def start(self, token):
        self._closed = asyncio.Event()
        await self.login(token)
        await self.connect()
        if hasattr(self, "on_ready"):
            await self.on_ready()
        await self._closed.wait()

    def run(self, token, **kwargs):
        asyncio.run(self.start(token))

    async def close(self):
        if self._closed is not None:
            self._closed.set()

    def get_channel(self, id):
        return self._channels.get(id)

    async def fetch_channel(self, channel_id):
        return TextChannel(self, http.get(Route("GET", "/channels/{id}", id=channel_id), self._token))


__all__ = [
    "Client",
    "ClientException",
    "DiscordException",
    "Forbidden",
    "HTTPException",
    "Intents",
    "NotFound",
    "http",
]
