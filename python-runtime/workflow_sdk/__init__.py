"""Hookline's Python SDK. Handlers get an `Event`; calls to code outside the project run as activities."""

from .api import activity, http_outcome, next_event, subscribe, unsubscribe
from .errors import (
    ActivityError,
    NonDeterminismError,
    ProtocolError,
    UnpicklableError,
    WorkflowError,
    WorkflowTimeoutError,
)
from .event import AttrDict, Event, Headers

__version__ = "0.1.0"

__all__ = [
    "ActivityError",
    "AttrDict",
    "Event",
    "Headers",
    "NonDeterminismError",
    "ProtocolError",
    "UnpicklableError",
    "WorkflowError",
    "WorkflowTimeoutError",
    "activity",
    "http_outcome",
    "next_event",
    "subscribe",
    "unsubscribe",
]
