"""Holds a request until a decision arrives on the `decisions` webhook, or answers 408."""

import json
import os
from datetime import timedelta

import workflow_sdk

TIMEOUT = timedelta(seconds=float(os.environ.get("APPROVAL_TIMEOUT", "20")))


def on_request(event):
    ticket = (event.data.body.json or {}).get("ticket", "t-1")
    # Subscribe before anything can arrive: events are buffered from this moment.
    # json.dumps makes a safe CEL string literal of whatever the client sent.
    sub = workflow_sdk.subscribe("decisions", f"data.body.json.ticket == {json.dumps(ticket)}")
    print(f"waiting for a decision on {ticket}")
    decision = workflow_sdk.next_event(sub, timeout=TIMEOUT)
    if not decision:
        workflow_sdk.http_outcome(status_code=408, json={"ticket": ticket, "status": "no decision"})
        return
    verdict = decision.data.body.json.get("verdict", "rejected")
    workflow_sdk.http_outcome(status_code=200, json={"ticket": ticket, "status": verdict})
