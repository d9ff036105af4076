"""Tests of sync-echo's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing


def echo(**request):
    return testing.run("handlers.py:on_echo", testing.event("POST", **request))


class SyncEchoTest(unittest.TestCase):
    def test_echoes_the_message(self):
        r = echo(json={"message": "hi"})
        self.assertEqual(r.response.status, 200)
        self.assertEqual(r.response.headers["x-echo"], "1")
        self.assertEqual(r.response.headers["Content-Type"], "application/json")
        self.assertEqual(r.response.json, {"echo": "hi", "length": 2})

    def test_json_sent_as_a_form_still_counts(self):
        # curl -d labels JSON application/x-www-form-urlencoded; the body is JSON all the same.
        r = echo(body='{"message":"hé"}', headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.response.json, {"echo": "hé", "length": 2})

    def test_400_on_anything_else(self):
        for request in ({"body": "not json"}, {"json": {"message": 3}}, {"json": ["message"]}, {}):
            with self.subTest(request=request):
                r = echo(**request)
                self.assertTrue(r.ok, r.error)
                self.assertEqual(r.response.status, 400)
                self.assertEqual(r.response.json, {"error": 'send JSON like {"message": "hi"}'})
                self.assertEqual(len(r.outcomes), 1)


if __name__ == "__main__":
    unittest.main()
