"""Trace context for outgoing calls: the session's W3C `traceparent`, as the service gave it.

With tracing on (the service's `OTEL_*` variables), the service sets `TRACEPARENT` (and, when it
has one, `TRACESTATE`) in the session's environment: the trace and the span of the session.
`trace_headers()` turns them into the headers a W3C-aware server reads, so the call it receives
lands in the session's trace. Standard library only.

The parent is always the session's span, inside an activity too: the service makes an activity's
span from its report once it has ended, so no span id exists in Python while it runs. The call's
span is then the activity's sibling, and its times fall inside the activity's.
"""

import os
import re

__all__ = ["trace_headers"]

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def trace_headers():
    """The headers that carry this session's trace to an outgoing call: ``{"traceparent": …}``.

    Empty when tracing is off (or the value is malformed), so it is always safe to pass:
    ``requests.post(url, json=body, headers=workflow_sdk.trace_headers())``. A new dict each call.
    """
    value = os.environ.get("TRACEPARENT", "").strip().lower()
    match = _TRACEPARENT.match(value)
    if not match or match.group(1) == "0" * 32 or match.group(2) == "0" * 16:
        return {}
    headers = {"traceparent": value}
    state = os.environ.get("TRACESTATE", "").strip()
    if state:
        headers["tracestate"] = state
    return headers
