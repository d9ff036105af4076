"""Kittehub stand-in for google-generativeai (never shipped; `google` stays a namespace package,
so google-auth and googleapiclient still import): `configure(api_key, transport, client_options)`
and `GenerativeModel(model_name).generate_content(text)` as the REST transport sends it
(`x-goog-api-key`, POST `/v1beta/models/<model>:generateContent`); the answer's `.text` is its
first candidate's text."""

from types import SimpleNamespace

from standin_http import call as request

_settings = {"api_key": None, "endpoint": "generativelanguage.googleapis.com"}


def configure(api_key=None, transport=None, client_options=None, **kwargs):
    _settings["api_key"] = api_key
    if client_options and client_options.get("api_endpoint"):
        _settings["endpoint"] = client_options["api_endpoint"]


class GenerativeModel:
    def __init__(self, model_name="gemini-1.5-flash", **kwargs):
        self.model_name = model_name if model_name.startswith("models/") else f"models/{model_name}"

    def generate_content(self, contents, **kwargs):
        endpoint = _settings["endpoint"]
        root = endpoint if "://" in endpoint else f"https://{endpoint}"
        parts = [{"text": contents}] if isinstance(contents, str) else [{"text": str(c)} for c in contents]
        url = f"{root.rstrip('/')}/v1beta/{self.model_name}:generateContent"
        status, answer = request(
            "POST",
            url,
            {"x-goog-api-key": _settings["api_key"]},
            json_body={"contents": [{"role": "user", "parts": parts}]},
        )
        if status >= 400:
            raise RuntimeError(f"{status} {answer}")
        text = answer["candidates"][0]["content"]["parts"][0]["text"]
        return SimpleNamespace(text=text, candidates=answer["candidates"])
