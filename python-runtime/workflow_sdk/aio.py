"""`async def` forms of the SDK functions (AutoKitteh's `autokitteh.aio`).

Each awaits nothing: it runs the SDK function and returns its value, so `await aio.next_event(…)`
works in an `async def` handler. The `store` mapping is left out, as in AutoKitteh.
"""

import functools

import workflow_sdk


def _wrap(fn):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


for _name in workflow_sdk.__all__:
    _fn = getattr(workflow_sdk, _name)
    if _name != "store" and callable(_fn) and not isinstance(_fn, type):
        globals()[_name] = _wrap(_fn)
del _name, _fn
