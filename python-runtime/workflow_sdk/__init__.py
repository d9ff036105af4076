"""Hookline's Python SDK. Handlers get an `Event`; calls to code outside the project run as activities.

Also importable as `autokitteh`, with AutoKitteh's functions: the store, start/signal/next_signal,
outcome, get_webhook_url, inhibit_activities, register_no_activity, and `errors`.
"""

from . import errors, integrations
from .api import activity, http_outcome, next_event, subscribe, unsubscribe
from .errors import (
    ActivityError,
    AutoKittehError,
    NonDeterminismError,
    ProtocolError,
    UnpicklableError,
    WorkflowError,
    WorkflowTimeoutError,
)
from .event import AttrDict, Event, Headers
from .inline import inhibit_activities, register_no_activity
from .retry import RetryPolicy
from .service import get_webhook_url, outcome
from .signals import Signal, next_signal, signal, start
from .store import (
    Op,
    add_values,
    check_and_set_value,
    del_value,
    get_store_public_url,
    get_value,
    list_values_keys,
    mutate_value,
    publish_value,
    set_value,
    store,
    unpublish_value,
)
from .tracing import trace_headers

integrations.install()

__version__ = "0.1.0"

__all__ = [
    "ActivityError",
    "AttrDict",
    "AutoKittehError",
    "Event",
    "Headers",
    "NonDeterminismError",
    "Op",
    "ProtocolError",
    "RetryPolicy",
    "Signal",
    "UnpicklableError",
    "WorkflowError",
    "WorkflowTimeoutError",
    "activity",
    "add_values",
    "check_and_set_value",
    "del_value",
    "errors",
    "get_store_public_url",
    "get_value",
    "get_webhook_url",
    "http_outcome",
    "inhibit_activities",
    "list_values_keys",
    "mutate_value",
    "next_event",
    "next_signal",
    "outcome",
    "publish_value",
    "register_no_activity",
    "set_value",
    "signal",
    "start",
    "store",
    "subscribe",
    "trace_headers",
    "unpublish_value",
    "unsubscribe",
]
