"""Stand-in `agents.run`: `Runner.run` sends the agent's turn to the Responses API, runs the
function calls it answers (their outputs go back in the next turn) and ends on a turn without
one; `RunResult.final_output` is the answer's text, parsed into the agent's `output_type`."""

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ai_agents_kh_http import post_json
from pydantic import BaseModel, TypeAdapter

from .agent import Agent
from .model_settings import ModelSettings

DEFAULT_MODEL = "gpt-4.1"


@dataclass
class RunConfig:
    model: str | None = None
    model_settings: ModelSettings | None = None
    workflow_name: str = "Agent workflow"


@dataclass
class RunResult:
    input: list
    new_items: list = field(default_factory=list)
    final_output: Any = None
    last_agent: Agent | None = None

    def to_input_list(self) -> list:
        return list(self.input) + list(self.new_items)


def _is_model(t) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _text_format(output_type) -> dict | None:
    if output_type in (None, str):
        return None
    if _is_model(output_type):
        schema = output_type.model_json_schema()
    else:
        schema = {
            "type": "object",
            "properties": {"response": TypeAdapter(output_type).json_schema()},
            "required": ["response"],
        }
    return {"format": {"type": "json_schema", "name": "final_output", "schema": schema, "strict": True}}


def _final_output(output_type, text: str):
    if output_type in (None, str):
        return text
    if _is_model(output_type):
        return output_type.model_validate_json(text)
    return TypeAdapter(output_type).validate_python(json.loads(text)["response"])


def _request(agent: Agent, items: list, settings: ModelSettings, model: str) -> dict:
    body: dict = {"model": model, "input": items}
    if agent.instructions:
        body["instructions"] = agent.instructions
    if agent.tools:
        body["tools"] = [t.to_json() for t in agent.tools]
    for key, name in (("temperature", "temperature"), ("top_p", "top_p"), ("tool_choice", "tool_choice")):
        if getattr(settings, key) is not None:
            body[name] = getattr(settings, key)
    if settings.max_tokens is not None:
        body["max_output_tokens"] = settings.max_tokens
    text = _text_format(agent.output_type)
    if text:
        body["text"] = text
    return body


def _call_model(body: dict) -> list:
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    key = os.environ.get("OPENAI_API_KEY", "")
    return post_json(f"{base}/responses", body, {"Authorization": f"Bearer {key}"}).get("output", [])


def _message_text(output: list) -> str:
    parts = []
    for item in output:
        if item.get("type") == "message":
            parts += [c.get("text", "") for c in item.get("content", []) if c.get("type") == "output_text"]
    return "".join(parts)


class Runner:
    @classmethod
    async def run(
        cls, starting_agent: Agent, input, *, run_config: RunConfig | None = None, max_turns: int = 10
    ):
        rc = run_config or RunConfig()
        agent = starting_agent
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        settings = agent.model_settings.resolve(rc.model_settings)
        model = rc.model or agent.model or DEFAULT_MODEL
        new: list = []
        tools = {getattr(t, "name", None): t for t in agent.tools}
        for _ in range(max_turns):
            output = _call_model(_request(agent, items + new, settings, model))
            new += output
            calls = [o for o in output if o.get("type") == "function_call"]
            if not calls:
                return RunResult(items, new, _final_output(agent.output_type, _message_text(output)), agent)
            for c in calls:
                result = await tools[c["name"]].invoke(c.get("arguments", "{}"))
                new.append({"type": "function_call_output", "call_id": c.get("call_id"), "output": result})
            # As the SDK: after a tool ran, the model is no longer forced to call one.
            settings = (
                settings.resolve(ModelSettings(tool_choice="auto")) if settings.tool_choice else settings
            )
        raise RuntimeError(f"Max turns ({max_turns}) exceeded")

    @classmethod
    def run_sync(cls, starting_agent: Agent, input, **kwargs):
        import asyncio

        return asyncio.run(cls.run(starting_agent, input, **kwargs))
