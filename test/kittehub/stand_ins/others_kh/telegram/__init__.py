"""Kittehub stand-in for python-telegram-bot 21 (never shipped): `Bot(token, base_url=…)` whose
awaitable methods POST JSON to `<base_url><token>/<method>` as the package does and return the
answer's `result` (a `telegram.error.TelegramError` when `ok` is false)."""

from standin_http import call as request


class TelegramError(Exception):
    pass


class Bot:
    def __init__(self, token, base_url="https://api.telegram.org/bot", **kwargs):
        self.token, self.base_url = token, base_url + token

    async def _post(self, method, body=None):
        _, answer = request("POST", f"{self.base_url}/{method}", json_body=body or {})
        if not isinstance(answer, dict) or not answer.get("ok"):
            raise TelegramError(str(answer))
        return answer["result"]

    async def get_me(self):
        return await self._post("getMe")

    async def send_message(self, chat_id, text, **kwargs):
        return await self._post("sendMessage", {"chat_id": chat_id, "text": text, **kwargs})
