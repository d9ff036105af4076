"""Tests of hello's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing

VARS = {"GREETING": "Hello"}  # as in manifest.yaml


class HelloTest(unittest.TestCase):
    def test_greets_the_name_in_a_json_body(self):
        r = testing.run("handlers.py:on_hello", testing.event("POST", json={"name": "Ada"}), vars=VARS)
        self.assertTrue(r.ok, r.error)
        self.assertEqual(r.prints[0], "Hello, Ada!")
        self.assertEqual(r.prints[1], f"path: /webhooks/{testing.WEBHOOK_ID}, session: {r.session_id}")
        self.assertEqual(r.outcomes, [])  # asynchronous: the caller already has its 202

    def test_falls_back_to_the_text_then_to_world(self):
        r = testing.run("handlers.py:on_hello", testing.event(body="Bob"), vars=VARS)
        self.assertEqual(r.prints[0], "Hello, Bob!")
        r = testing.run("handlers.py:on_hello", testing.event(), vars={"GREETING": "Hi"})
        self.assertEqual(r.prints[0], "Hi, world!")

    def test_a_json_list_is_not_a_name(self):
        r = testing.run("handlers.py:on_hello", testing.event(json=["Ada"]), vars=VARS)
        self.assertEqual(r.prints[0], 'Hello, ["Ada"]!')

    def test_without_the_var_the_import_fails(self):
        r = testing.run("handlers.py:on_hello", testing.event(json={"name": "Ada"}))
        self.assertEqual(str(r.error), "KeyError: 'GREETING'")


if __name__ == "__main__":
    unittest.main()
