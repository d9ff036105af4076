"""Stand-in `langchain_core.tools`: `@tool` makes a function a tool (its name, docstring and an
argument schema from its signature); `invoke` takes the arguments, or a model's tool call (then
answers a `ToolMessage`)."""

import inspect
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, create_model

from .messages import ToolMessage


class BaseTool:
    name: str = ""
    description: str = ""
    args_schema: type[BaseModel] | None = None

    def _run(self, **kwargs) -> Any:
        raise NotImplementedError

    def tool_schema(self) -> dict:
        schema = self.args_schema.model_json_schema() if self.args_schema else {"type": "object"}
        return {"name": self.name, "description": self.description, "parameters": schema}

    def invoke(self, input: Any, config: Any = None) -> Any:
        call = input if isinstance(input, dict) and input.get("type") == "tool_call" else None
        args = call["args"] if call else input
        if isinstance(args, str):
            args = {next(iter(self.args_schema.model_fields)): args}
        if self.args_schema:
            parsed = self.args_schema.model_validate(args)
            args = {n: getattr(parsed, n) for n in self.args_schema.model_fields if n in args}
        result = self._run(**args)
        if not call:
            return result
        content = result if isinstance(result, str) else json.dumps(result, default=str)
        return ToolMessage(content, tool_call_id=call.get("id", ""), name=self.name)


class StructuredTool(BaseTool):
    def __init__(self, func: Callable, name: str, description: str, args_schema: type[BaseModel]):
        self.func = func
        self.name = name
        self.description = description
        self.args_schema = args_schema

    def _run(self, **kwargs) -> Any:
        return self.func(**kwargs)


def _from_function(fn: Callable) -> StructuredTool:
    params = inspect.signature(fn).parameters
    fields = {
        n: (p.annotation if p.annotation is not inspect._empty else Any, ...) for n, p in params.items()
    }
    schema = create_model(fn.__name__, **fields)
    return StructuredTool(fn, fn.__name__, inspect.getdoc(fn) or "", schema)


def tool(fn: Callable | str | None = None, **kwargs):
    if callable(fn):
        return _from_function(fn)
    return _from_function
