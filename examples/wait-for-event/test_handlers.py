"""Tests of wait-for-event's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import json
import unittest

from workflow_sdk import testing


def decision(ticket, verdict):
    return testing.event("POST", json={"ticket": ticket, "verdict": verdict})


def ticket_filter(flt, event):
    """The handler's one filter shape, `data.body.json.ticket == "<ticket>"`, applied in Python."""
    return flt == f"data.body.json.ticket == {json.dumps(event.data.body.json['ticket'])}"


def request(ticket, decisions, **options):
    body = {"json": {"ticket": ticket}} if ticket else {}
    return testing.run(
        "handlers.py:on_request",
        testing.event("POST", **body),
        events={"decisions": decisions},
        match=ticket_filter,
        **options,
    )


class WaitForEventTest(unittest.TestCase):
    def test_the_matching_decision_answers(self):
        r = request("t-7", [decision("t-8", "rejected"), decision("t-7", "approved")])
        self.assertEqual((r.response.status, r.response.json), (200, {"ticket": "t-7", "status": "approved"}))
        self.assertEqual(r.prints, ["waiting for a decision on t-7"])
        [sub] = r.subscriptions
        self.assertEqual((sub.name, sub.filter), ("decisions", 'data.body.json.ticket == "t-7"'))
        self.assertEqual(r.next_events[0].timeout, 20.0)  # APPROVAL_TIMEOUT's default

    def test_408_without_a_decision_within_the_timeout(self):
        r = request("t-9", [decision("t-7", "approved")], vars={"APPROVAL_TIMEOUT": "0.5"})
        self.assertEqual(
            (r.response.status, r.response.json), (408, {"ticket": "t-9", "status": "no decision"})
        )
        self.assertEqual(r.next_events[0].timeout, 0.5)
        self.assertIsNone(r.next_events[0].event)

    def test_a_decision_without_verdict_rejects(self):
        r = request("t-1", [testing.event(json={"ticket": "t-1"})])
        self.assertEqual(r.response.json, {"ticket": "t-1", "status": "rejected"})

    def test_no_json_body_waits_on_ticket_t1(self):
        r = request(None, [decision("t-1", "approved")])
        self.assertEqual(r.response.json, {"ticket": "t-1", "status": "approved"})
        self.assertEqual(r.subscriptions[0].filter, 'data.body.json.ticket == "t-1"')


if __name__ == "__main__":
    unittest.main()
