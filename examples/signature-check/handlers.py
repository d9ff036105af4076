"""Verifies an HMAC-SHA256 signature of the raw body, then accepts the delivery."""

import hashlib
import hmac
import os

import workflow_sdk


def on_push(event):
    secret = os.environ.get("WEBHOOK_SECRET", "")
    given = event.data.headers.get("X-Hub-Signature-256", "")
    digest = hmac.new(secret.encode(), event.data.body.bytes, hashlib.sha256).hexdigest()
    if not secret or not hmac.compare_digest(given, f"sha256={digest}"):
        workflow_sdk.http_outcome(status_code=401, body="bad signature")
        return
    workflow_sdk.http_outcome(status_code=202, json={"accepted": True})
    print(f"accepted a delivery of {len(event.data.body.bytes)} bytes")
