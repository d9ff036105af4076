"""Tests of fan-out's handlers with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from autokitteh import testing


class FanOutTest(unittest.TestCase):
    def test_parent_starts_one_child_per_item_and_sums_their_signals(self):
        signals = [("result", {"item": n, "square": n * n}) for n in (2, 5)]
        r = testing.run(
            "program.py:on_fan_out",
            testing.event("POST", json={"items": [2, 5]}),
            signals=signals,
            session_id="ses_parent",
        )
        self.assertTrue(r.ok, r.error)
        self.assertEqual([s.loc for s in r.started], ["program.py:on_item"] * 2)
        self.assertEqual([s.data for s in r.started], [{"parent": "ses_parent", "item": n} for n in (2, 5)])
        self.assertEqual(r.response.json, {"children": 2, "total": 29})
        self.assertEqual(r.outcome_value["total"], 29)
        self.assertEqual(r.prints, ["2 children, total of squares 29"])

    def test_a_missing_child_answers_504(self):
        r = testing.run("program.py:on_fan_out", testing.event("POST", json={"items": [3]}))
        self.assertEqual(r.response.status, 504)

    def test_child_signals_its_square_to_the_parent(self):
        e = testing.start_event({"parent": "ses_parent", "item": 4})
        r = testing.run("program.py:on_item", e)
        self.assertTrue(r.ok, r.error)
        self.assertEqual(
            r.signals_sent, [testing.SentSignal("ses_parent", "result", {"item": 4, "square": 16})]
        )


if __name__ == "__main__":
    unittest.main()
