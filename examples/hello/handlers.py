"""Prints a greeting for every POST. Read the prints with `npx cli session prints hello`."""

import os

import workflow_sdk

# Read at import: vars are in the environment before this module loads.
GREETING = os.environ["GREETING"]


def on_hello(event: workflow_sdk.Event):
    body = event.data.body
    name = (body.json or {}).get("name") if isinstance(body.json, dict) else None
    print(f"{GREETING}, {name or body.text or 'world'}!")
    print(f"path: {event.data.url.path}, session: {event.session_id}")
