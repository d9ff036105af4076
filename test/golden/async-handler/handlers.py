import asyncio

import workflow_sdk


@workflow_sdk.activity
async def slow_square(n):
    await asyncio.sleep(0.01)
    return n * n


async def on_event(event):
    results = [await slow_square(n) for n in range(4)]
    print(results)
