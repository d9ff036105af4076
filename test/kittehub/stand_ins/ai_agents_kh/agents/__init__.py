"""Kittehub stand-in for openai-agents (tests only, never shipped; this machine's package index
lacks it): `Agent`, `Runner.run` (async, over the Responses API: `POST <OPENAI_BASE_URL>/responses`
with `OPENAI_API_KEY`, function tools run and the model asked again), `function_tool`,
`WebSearchTool`, `ModelSettings`, `RunConfig`. A structured `output_type` is built from the JSON
text the model answers, as the SDK does (a non-model type wrapped in `{"response": …}`)."""

from .agent import Agent
from .model_settings import ModelSettings
from .run import RunConfig, Runner, RunResult
from .tool import FunctionTool, WebSearchTool, function_tool

__all__ = [
    "Agent",
    "FunctionTool",
    "ModelSettings",
    "RunConfig",
    "RunResult",
    "Runner",
    "WebSearchTool",
    "function_tool",
]
