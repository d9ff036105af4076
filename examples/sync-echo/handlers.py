"""Echoes a JSON message back, and answers 400 when the request is not what it expects."""

import workflow_sdk


def on_echo(event):
    payload = event.data.body.json
    if not isinstance(payload, dict) or not isinstance(payload.get("message"), str):
        # Validation first: answer, then return early.
        workflow_sdk.http_outcome(
            status_code=400,
            json={"error": 'send JSON like {"message": "hi"}'},
        )
        return
    workflow_sdk.http_outcome(
        status_code=200,
        headers={"X-Echo": "1"},
        json={"echo": payload["message"], "length": len(payload["message"])},
    )
