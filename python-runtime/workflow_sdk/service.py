"""SDK calls answered by the service: `outcome`, `get_webhook_url`, and the request helper.

Each is one request/reply on the session's channel; in a durable session the service journals
the reply, so a replay returns the recorded value without asking again.
"""

import sys

from . import seam, values
from .api import _session_for


def call(op, kind, fields):
    """Send request `kind` for SDK function `op` and return the reply's value."""
    return _session_for(op).call_service(kind, fields)


def outcome(value):
    """Record a value as the session's outcome (AutoKitteh); shown by `cli session log`.

    >>> outcome({"processed": 3})
    """
    encoded = values.encode(value)
    if seam.current is None:
        print(f"outcome: {value!r}", file=sys.stderr)
        return None
    call("outcome", "outcome_value", {"value": encoded})
    return None


def get_webhook_url(trigger_name):
    """The full webhook URL of a trigger of this project.

    >>> get_webhook_url("on_github")
    'http://127.0.0.1:9980/webhooks/…'
    """
    if not isinstance(trigger_name, str) or not trigger_name:
        raise ValueError("get_webhook_url: trigger_name must be a non-empty string")
    return call("get_webhook_url", "webhook_url", {"trigger": trigger_name})
