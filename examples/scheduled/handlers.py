"""Scheduled sessions. Each gets an event whose data says when the slot was due and when it fired.

`event.data`: `schedule` (as in the manifest), `timezone`, `due` and `fired` (ISO-8601, UTC) and
`missed` (slots that passed while the service was down, folded into this one firing).
"""

import os
from datetime import datetime

import workflow_sdk

LATE_AFTER = float(os.environ["LATE_AFTER_SECONDS"])


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def on_heartbeat(event: workflow_sdk.Event):
    due, fired = _when(event.data.due), _when(event.data.fired)
    late = (fired - due).total_seconds()
    print(f"heartbeat due {event.data.due}: {'late' if late > LATE_AFTER else 'on time'}")
    if event.data.missed:
        print(f"{event.data.missed} earlier slot(s) passed while the service was down")


def on_report(event: workflow_sdk.Event):
    print(f"weekday report of {event.data.due[:10]} ({event.data.timezone}, {event.data.schedule})")
