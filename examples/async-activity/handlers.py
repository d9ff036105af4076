"""`async def` handler (run with asyncio.run) awaiting an `async def` activity."""

import asyncio

import workflow_sdk


@workflow_sdk.activity
async def lookup(word: str) -> dict:
    # The whole body is one activity, on the activity thread pool with its own event loop.
    await asyncio.sleep(0.05)
    return {"word": word, "length": len(word)}


async def on_fanout(event):
    words = (event.data.body.text or "").split() or ["hello"]
    results = [await lookup(w) for w in words]
    print(f"looked up {len(results)} words")
    workflow_sdk.http_outcome(json={"results": results})
