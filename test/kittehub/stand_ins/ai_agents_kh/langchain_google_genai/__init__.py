"""Kittehub stand-in for langchain-google-genai (tests only, never shipped; this machine's index
lacks it): `ChatGoogleGenerativeAI(model=…)` with `bind_tools` and `invoke`, sent as Gemini's REST
API takes it (`POST <base>/v1beta/models/<model>:generateContent`, `x-goog-api-key` from
`GOOGLE_API_KEY`; base `GOOGLE_GEMINI_BASE_URL`, as google-genai reads it). The answer's text
parts are the AI message's content, its `functionCall` parts its tool calls."""

import json
import os
import uuid

from ai_agents_kh_http import post_json
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage, convert_to_messages

_BASE = "https://generativelanguage.googleapis.com"


def _strip_titles(schema):
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k not in ("title", "additionalProperties")}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _tool_response(m: ToolMessage) -> dict:
    try:
        content = json.loads(m.content)
    except (TypeError, ValueError):
        content = m.content
    return {"functionResponse": {"name": m.name or "", "response": {"content": content}}}


def _content(m) -> dict:
    if isinstance(m, ToolMessage):
        return {"role": "user", "parts": [_tool_response(m)]}
    parts = [{"text": m.content}] if m.content else []
    if isinstance(m, AIMessage):
        parts += [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in m.tool_calls]
        return {"role": "model", "parts": parts}
    return {"role": "user", "parts": parts}


def _ai_message(answer: dict) -> AIMessage:
    parts = answer["candidates"][0]["content"].get("parts", [])
    text = "".join(p.get("text", "") for p in parts)
    calls = [
        {
            "name": p["functionCall"]["name"],
            "args": p["functionCall"].get("args", {}),
            "id": str(uuid.uuid4()),
            "type": "tool_call",
        }
        for p in parts
        if "functionCall" in p
    ]
    return AIMessage(text, tool_calls=calls, usage_metadata=answer.get("usageMetadata"))


class ChatGoogleGenerativeAI:
    def __init__(self, model: str = "gemini-1.5-flash", google_api_key: str | None = None, **kwargs):
        self.model = model.removeprefix("models/")
        self.google_api_key = google_api_key
        self.tools: list = []

    def bind_tools(self, tools, **kwargs) -> "ChatGoogleGenerativeAI":
        bound = ChatGoogleGenerativeAI(self.model, self.google_api_key)
        bound.tools = list(tools)
        return bound

    def _body(self, messages) -> dict:
        system = [m for m in messages if isinstance(m, SystemMessage)]
        body: dict = {"contents": [_content(m) for m in messages if not isinstance(m, SystemMessage)]}
        if system:
            body["systemInstruction"] = {"parts": [{"text": m.content} for m in system]}
        if self.tools:
            decls = [_strip_titles(t.tool_schema()) for t in self.tools]
            body["tools"] = [{"functionDeclarations": decls}]
        return body

    def invoke(self, input, config=None) -> AIMessage:
        messages = convert_to_messages(input)
        base = os.environ.get("GOOGLE_GEMINI_BASE_URL", _BASE).rstrip("/")
        key = self.google_api_key or os.environ.get("GOOGLE_API_KEY", "")
        url = f"{base}/v1beta/models/{self.model}:generateContent"
        return _ai_message(post_json(url, self._body(messages), {"x-goog-api-key": key}))
