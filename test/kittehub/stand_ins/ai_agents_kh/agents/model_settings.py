"""Stand-in `agents.model_settings`: the model settings an agent or a run sets."""

from dataclasses import dataclass, fields


@dataclass
class ModelSettings:
    temperature: float | None = None
    top_p: float | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None

    def resolve(self, override: "ModelSettings | None") -> "ModelSettings":
        """These settings with the override's non-None values on top, as the SDK merges them."""
        if override is None:
            return self
        merged = {f.name: getattr(self, f.name) for f in fields(self)}
        for f in fields(override):
            if getattr(override, f.name) is not None:
                merged[f.name] = getattr(override, f.name)
        return ModelSettings(**merged)
