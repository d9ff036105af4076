"""Test stand-in for python-telegram-bot (see ../README.md): `Bot(token, base_url=…)` whose
`await get_me()` / `send_message(chat_id, text)` POST to `<base_url><token>/<method>`."""

from standin_http import call


class Bot:
    def __init__(self, token, base_url="https://api.telegram.org/bot", **kwargs):
        self.token, self.base_url = token, base_url + token

    async def _post(self, method, body=None):
        return call("POST", f"{self.base_url}/{method}", json_body=body or {})[1]["result"]

    async def get_me(self):
        return await self._post("getMe")

    async def send_message(self, chat_id, text, **kwargs):
        return await self._post("sendMessage", {"chat_id": chat_id, "text": text, **kwargs})
