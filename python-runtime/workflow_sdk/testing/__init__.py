"""Test a handler in this process, without the service: `workflow_sdk.testing`.

Build the request with `event(...)`, run the handler with `run(...)` (or inside a `Session`),
and assert on the `Result`: the response, every outcome, the prints, subscriptions, events
served to `next_event`, activities, the store, the error. Standard library only; importing
`workflow_sdk` does not import this package.

>>> import workflow_sdk
>>> from workflow_sdk import testing
>>> def on_echo(event):
...     workflow_sdk.http_outcome(200, json={"echo": event.data.body.json["message"]})
>>> result = testing.run(on_echo, testing.event("POST", json={"message": "hi"}))
>>> result.ok, result.response.status, result.response.json
(True, 200, {'echo': 'hi'})

See docs/testing.md.
"""

from .api_stand_in import Reply, Request, StandIn, stand_in
from .backend import ActivityCall, NextEvent, Outcome, Subscription
from .connections import (
    INBOUND_ID,
    confluence_event,
    discord_event,
    github_event,
    github_events,
    http_event,
    jira_event,
    slack_event,
    slack_interaction,
    slack_slash_command,
    telegram_event,
)
from .events import WEBHOOK_ID, event, start_event
from .google_events import (
    gmail_event,
    google_calendar_events,
    google_drive_events,
    google_forms_event,
)
from .result import HandlerError, Print, Result
from .service import SentSignal, StartCall
from .session import Session, run

__all__ = [
    "INBOUND_ID",
    "WEBHOOK_ID",
    "ActivityCall",
    "HandlerError",
    "NextEvent",
    "Outcome",
    "Print",
    "Reply",
    "Request",
    "Result",
    "SentSignal",
    "Session",
    "StandIn",
    "StartCall",
    "Subscription",
    "event",
    "github_event",
    "github_events",
    "gmail_event",
    "google_calendar_events",
    "google_drive_events",
    "google_forms_event",
    "http_event",
    "jira_event",
    "confluence_event",
    "discord_event",
    "telegram_event",
    "run",
    "slack_event",
    "slack_interaction",
    "slack_slash_command",
    "stand_in",
    "start_event",
]
