"""Kittehub stand-in for google-generativeai (tests only, never shipped; `google` stays a
namespace package, so google-auth and googleapiclient still import): `configure`,
`GenerativeModel(model_name).generate_content(text)` and `.start_chat(history).send_message(text)`,
sent as the package's REST transport sends them (`x-goog-api-key`, POST
`/v1beta/models/<model>:generateContent`, a chat's whole history each time); an answer's `.text`
is its first candidate's text."""

import json
import urllib.error
import urllib.request
from types import SimpleNamespace

_settings = {"api_key": None, "endpoint": "generativelanguage.googleapis.com"}


def configure(api_key=None, transport=None, client_options=None, **kwargs):
    _settings["api_key"] = api_key
    if client_options and client_options.get("api_endpoint"):
        _settings["endpoint"] = client_options["api_endpoint"]


def _parts(parts):
    if isinstance(parts, str):
        return [{"text": parts}]
    return [{"text": p} if isinstance(p, str) else p for p in parts]


class GenerativeModel:
    def __init__(self, model_name="gemini-1.5-flash", **kwargs):
        self.model_name = model_name if model_name.startswith("models/") else f"models/{model_name}"

    def _generate(self, contents):
        endpoint = _settings["endpoint"]
        root = endpoint if "://" in endpoint else f"https://{endpoint}"
        url = f"{root.rstrip('/')}/v1beta/{self.model_name}:generateContent"
        req = urllib.request.Request(
            url,
            data=json.dumps({"contents": contents}).encode(),
            method="POST",
            headers={"x-goog-api-key": _settings["api_key"] or "", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                answer = json.loads(res.read())
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{e.code} {e.read()[:300]!r}") from None
        content = answer["candidates"][0]["content"]
        return SimpleNamespace(text=content["parts"][0]["text"], candidates=answer["candidates"]), content

    def generate_content(self, contents, **kwargs):
        return self._generate([{"role": "user", "parts": _parts(contents)}])[0]

    def start_chat(self, history=None, **kwargs):
        return ChatSession(self, history or [])


class ChatSession:
    def __init__(self, model, history):
        self.model = model
        self.history = [{"role": h["role"], "parts": _parts(h["parts"])} for h in history]

    def send_message(self, content, **kwargs):
        sent = self.history + [{"role": "user", "parts": _parts(content)}]
        response, content_out = self.model._generate(sent)
        self.history = sent + [{"role": content_out.get("role", "model"), "parts": content_out["parts"]}]
        return response
