"""Tests of store-counter's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing


class StoreCounterTest(unittest.TestCase):
    def test_first_hit_counts_one(self):
        r = testing.run("handlers.py:on_hit", testing.event("POST"))
        self.assertTrue(r.ok, r.error)
        self.assertEqual(r.response.status, 200)
        self.assertEqual(r.response.json["count"], 1)
        self.assertEqual(r.store, {"hits": 1})

    def test_counts_on_from_the_stored_value(self):
        r = testing.run("handlers.py:on_hit", testing.event("POST"), store={"hits": 41})
        self.assertEqual(r.response.json["count"], 42)
        self.assertEqual(r.store["hits"], 42)
        self.assertTrue(r.response.json["public"].endswith("/hits"))


if __name__ == "__main__":
    unittest.main()
