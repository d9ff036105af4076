"""Stand-in `langgraph.prebuilt`: `ToolNode` runs the last AI message's tool calls (each answer a
`ToolMessage`); `tools_condition` leads to "tools" when there are calls, else to the end."""

from langchain_core.messages import AIMessage, ToolMessage

from ..graph import END


def _last_message(state):
    messages = state.get("messages", []) if isinstance(state, dict) else state
    return messages[-1] if messages else None


class ToolNode:
    def __init__(self, tools, name: str = "tools"):
        self.tools = {t.name: t for t in tools}
        self.name = name

    def invoke(self, state, config=None):
        message = _last_message(state)
        out = []
        for call in getattr(message, "tool_calls", []):
            tool = self.tools.get(call["name"])
            if tool is None:
                out.append(ToolMessage(f"Error: {call['name']} is not a valid tool", tool_call_id=call["id"]))
                continue
            out.append(tool.invoke({**call, "type": "tool_call"}))
        return {"messages": out}


def tools_condition(state, messages_key: str = "messages") -> str:
    message = _last_message(state)
    if isinstance(message, AIMessage) and message.tool_calls:
        return "tools"
    return END
