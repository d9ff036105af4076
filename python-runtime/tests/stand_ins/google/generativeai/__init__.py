"""Test stand-in for google-generativeai (see ../../README.md): `configure` and
`GenerativeModel(model_name).generate_content(text)` over REST, as the package's REST transport
sends it (`x-goog-api-key`, `/v1beta/models/<model>:generateContent`)."""

from types import SimpleNamespace

from standin_http import call

_settings = {"api_key": None, "endpoint": "generativelanguage.googleapis.com"}


def configure(api_key=None, transport=None, client_options=None):
    _settings["api_key"] = api_key
    if client_options and client_options.get("api_endpoint"):
        _settings["endpoint"] = client_options["api_endpoint"]


class GenerativeModel:
    def __init__(self, model_name="gemini-1.5-flash", **kwargs):
        self.model_name = model_name if model_name.startswith("models/") else f"models/{model_name}"

    def generate_content(self, contents):
        endpoint = _settings["endpoint"]
        root = endpoint if "://" in endpoint else f"https://{endpoint}"
        body = {"contents": [{"parts": [{"text": contents}]}]}
        url = f"{root.rstrip('/')}/v1beta/{self.model_name}:generateContent"
        _, answer = call("POST", url, {"x-goog-api-key": _settings["api_key"]}, json_body=body)
        text = answer["candidates"][0]["content"]["parts"][0]["text"]
        return SimpleNamespace(text=text)
