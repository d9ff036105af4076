"""Kittehub stand-in for langchain-core (tests only, never shipped; this machine's index has a
langchain-core that cannot install without langchain-protocol): `messages` and `tools.tool`."""
