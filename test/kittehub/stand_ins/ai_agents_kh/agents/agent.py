"""Stand-in `agents.agent`: an agent is its name, instructions, model, tools and output type."""

from dataclasses import dataclass, field
from typing import Any

from .model_settings import ModelSettings


@dataclass
class Agent:
    name: str
    instructions: str | None = None
    model: str | None = None
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    tools: list = field(default_factory=list)
    output_type: Any = None
    handoffs: list = field(default_factory=list)
