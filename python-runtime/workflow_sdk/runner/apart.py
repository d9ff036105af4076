"""Journaled values too big for one message: sent in parts, kept apart from their step.

A durable activity's pickled result (or exception) over INLINE bytes does not go in its `step`
message (one line, at most 8 MiB): it goes first as `part` messages of at most PART bytes each
(base64), in order, then the step says `apart` (which member, how many parts, how many bytes).
The service stores each part apart from the step (src/runtime/python/parts.ts,
src/storage/session-records.ts) and, when a replay asks for the step, sends the parts back the
same way before its reply (`Channel` keeps them). A value over MAX bytes fails the session with
an error naming the limit (docs/limits.md); the service refuses one too.
"""

import base64

from ..errors import ActivityError

INLINE = 1 << 20  # up to 1 MiB a value stays in its step, as AutoKitteh keeps it
PART = 1 << 20
MAX = 64 << 20  # the most a journaled value may hold: src/runtime/python/parts.ts MAX_APART_BYTES


def too_big(name, field, size):
    return ActivityError(
        f"the {field} of activity {name} is {size} bytes pickled, over {MAX} bytes (64 MiB), "
        "the most a journaled value may hold; return less (keep big data elsewhere and return "
        "where it is)"
    )


def step_fields(session, seq, name, field, data):
    """The step's member for a pickled value: inline, or apart once its parts are sent."""
    size = len(data)
    if size <= INLINE:
        return {field: base64.b64encode(data).decode()}
    if size > MAX:
        session.fatal(too_big(name, field, size))
    view = memoryview(data)
    count = 0
    for at in range(0, size, PART):  # one part at a time: no second copy of the whole value
        encoded = base64.b64encode(view[at : at + PART])
        session.channel.send_raw(b'{"type":"part","seq":%d,"data":"%s"}\n' % (seq, encoded))
        count += 1
    return {"apart": {"field": field, "parts": count, "bytes": size}}


def recorded(channel, seq, step):
    """A replayed activity's pickled value and its member (`result` or `error`)."""
    apart = step.get("apart")
    if apart is None:
        field = "error" if "error" in step else "result"
        return base64.b64decode(step[field]), field
    parts = channel.take_parts(seq)
    data = b"".join(parts)
    del parts
    if len(data) != apart["bytes"]:
        raise ValueError(f"{len(data)} of its {apart['bytes']} bytes came from the service")
    return data, apart["field"]
