"""Stand-in `langchain_core.messages`: the message kinds a chat graph passes, and the dict forms
(`{"role": …, "content": …}`) turned into them."""

import uuid
from typing import Any


class BaseMessage:
    type = "base"

    def __init__(self, content: Any = "", *, id: str | None = None, name: str | None = None, **kwargs):
        self.content = content
        self.id = id
        self.name = name
        self.additional_kwargs = kwargs

    def __repr__(self):
        return f"{type(self).__name__}(content={self.content!r})"


class HumanMessage(BaseMessage):
    type = "human"


class SystemMessage(BaseMessage):
    type = "system"


class AIMessage(BaseMessage):
    type = "ai"

    def __init__(self, content: Any = "", *, tool_calls: list | None = None, **kwargs):
        super().__init__(content, **kwargs)
        self.tool_calls = tool_calls or []


class ToolMessage(BaseMessage):
    type = "tool"

    def __init__(self, content: Any = "", *, tool_call_id: str = "", **kwargs):
        super().__init__(content, **kwargs)
        self.tool_call_id = tool_call_id


_ROLES = {
    "user": HumanMessage,
    "human": HumanMessage,
    "system": SystemMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
    "tool": ToolMessage,
}


def convert_to_messages(items) -> list[BaseMessage]:
    out = []
    for m in items if isinstance(items, list) else [items]:
        if isinstance(m, BaseMessage):
            out.append(m)
        elif isinstance(m, str):
            out.append(HumanMessage(m))
        else:
            m = dict(m)
            out.append(_ROLES[m.pop("role", m.pop("type", "user"))](m.pop("content", ""), **m))
    return out


def new_id() -> str:
    return str(uuid.uuid4())
