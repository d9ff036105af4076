"""Tests of signature-check's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import hashlib
import hmac
import json
import unittest

from workflow_sdk import testing

SECRET = "topsecret"
BODY = json.dumps({"ref": "main"})


def signed(body, secret=SECRET):
    digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    return testing.event("POST", headers={"X-Hub-Signature-256": f"sha256={digest}"}, body=body)


class SignatureCheckTest(unittest.TestCase):
    def test_a_good_signature_is_accepted(self):
        r = testing.run("handlers.py:on_push", signed(BODY), vars={"WEBHOOK_SECRET": SECRET})
        self.assertEqual((r.response.status, r.response.json), (202, {"accepted": True}))
        self.assertEqual(r.prints, [f"accepted a delivery of {len(BODY)} bytes"])

    def test_header_name_in_any_case(self):
        event = testing.event(
            headers={"x-hub-signature-256": signed(BODY).data.headers["X-Hub-Signature-256"]}, body=BODY
        )
        r = testing.run("handlers.py:on_push", event, vars={"WEBHOOK_SECRET": SECRET})
        self.assertEqual(r.response.status, 202)

    def test_401_on_a_bad_signature_a_missing_one_or_no_secret(self):
        cases = [
            (signed(BODY, "other"), SECRET),
            (testing.event(body=BODY), SECRET),
            (signed(BODY, ""), ""),  # an unset secret never accepts, even a matching signature
        ]
        for event, secret in cases:
            with self.subTest(secret=secret):
                r = testing.run("handlers.py:on_push", event, vars={"WEBHOOK_SECRET": secret})
                self.assertEqual((r.response.status, r.response.body), (401, b"bad signature"))
                self.assertEqual(r.prints, [])


if __name__ == "__main__":
    unittest.main()
