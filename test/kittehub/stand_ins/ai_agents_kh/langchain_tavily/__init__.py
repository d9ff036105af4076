"""Kittehub stand-in for langchain-tavily (tests only, never shipped; this machine's index lacks
it): the `TavilySearch` tool, a `POST <base>/search` with `TAVILY_API_KEY` as a bearer token (base
`TAVILY_API_BASE_URL`, else Tavily's), answering the service's JSON."""

import os

from ai_agents_kh_http import post_json
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

_BASE = "https://api.tavily.com"


class TavilySearchInput(BaseModel):
    query: str = Field(description="Search query to look up")
    include_domains: list[str] | None = None
    exclude_domains: list[str] | None = None
    search_depth: str | None = None
    time_range: str | None = None
    topic: str | None = None


class TavilySearch(BaseTool):
    name = "tavily_search"
    description = (
        "A search engine optimized for comprehensive, accurate, and trusted results. "
        "Useful for when you need to answer questions about current events."
    )
    args_schema = TavilySearchInput

    def __init__(self, max_results: int = 5, topic: str = "general", **kwargs):
        self.max_results = max_results
        self.topic = topic
        self.api_key = kwargs.get("tavily_api_key")

    def _run(self, query: str, **kwargs) -> dict:
        body = {"query": query, "max_results": self.max_results, "topic": kwargs.get("topic") or self.topic}
        body.update({k: v for k, v in kwargs.items() if v is not None and k != "topic"})
        base = os.environ.get("TAVILY_API_BASE_URL", _BASE).rstrip("/")
        key = self.api_key or os.environ.get("TAVILY_API_KEY", "")
        return post_json(f"{base}/search", body, {"Authorization": f"Bearer {key}"})
