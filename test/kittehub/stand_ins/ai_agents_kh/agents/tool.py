"""Stand-in `agents.tool`: `function_tool` (a Python function the model may call, its parameters'
JSON schema from the signature, pydantic arguments built from the call's JSON) and the hosted
`WebSearchTool` (only declared to the model; the search is the model's own)."""

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import create_model


@dataclass
class FunctionTool:
    name: str
    description: str
    params_json_schema: dict
    on_invoke_tool: Callable
    strict_json_schema: bool = True

    def to_json(self) -> dict:
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.params_json_schema,
            "strict": self.strict_json_schema,
        }

    async def invoke(self, arguments: str) -> str:
        return await self.on_invoke_tool(arguments)


def _create_function_tool(fn: Callable) -> FunctionTool:
    params = inspect.signature(fn).parameters
    fields = {
        n: (p.annotation if p.annotation is not inspect._empty else Any, ...) for n, p in params.items()
    }
    args_model = create_model(f"{fn.__name__}_args", **fields)

    # As the SDK's, the tool runs through a closure made here: like the real FunctionTool, it
    # cannot be pickled (an activity's argument in a durable session fails as it would there).
    async def _on_invoke_tool(arguments: str) -> str:
        args = args_model.model_validate_json(arguments or "{}")
        result = fn(**{n: getattr(args, n) for n in type(args).model_fields})
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, str) else json.dumps(result, default=str)

    doc = inspect.getdoc(fn) or ""
    return FunctionTool(fn.__name__, doc, args_model.model_json_schema(), _on_invoke_tool)


def function_tool(fn: Callable | None = None, **kwargs):
    if fn is None:
        return _create_function_tool
    return _create_function_tool(fn)


@dataclass
class WebSearchTool:
    user_location: dict | None = None
    search_context_size: str = "medium"

    @property
    def name(self) -> str:
        return "web_search_preview"

    def to_json(self) -> dict:
        tool = {"type": "web_search_preview", "search_context_size": self.search_context_size}
        if self.user_location:
            tool["user_location"] = self.user_location
        return tool
