"""Tests of the scheduled handlers with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing
from workflow_sdk.event import event_from_wire

VARS = {"LATE_AFTER_SECONDS": "5"}  # as in manifest.yaml


def firing(schedule, due, fired, missed=0, timezone="UTC"):
    """A schedule's event as the service sends it."""
    data = {"schedule": schedule, "timezone": timezone, "due": due, "fired": fired, "missed": missed}
    return event_from_wire(
        {"event_id": "evt_test", "session_id": None, "event_type": "schedule", "data": data}
    )


class HeartbeatTest(unittest.TestCase):
    def test_on_time(self):
        e = firing("@every 10s", "2026-03-01T10:00:10.000Z", "2026-03-01T10:00:10.004Z")
        r = testing.run("handlers.py:on_heartbeat", e, vars=VARS)
        self.assertTrue(r.ok, r.error)
        self.assertEqual(r.prints, ["heartbeat due 2026-03-01T10:00:10.000Z: on time"])

    def test_late_after_downtime_says_what_was_missed(self):
        e = firing("@every 10s", "2026-03-01T10:00:10.000Z", "2026-03-01T10:01:02.000Z", missed=5)
        r = testing.run("handlers.py:on_heartbeat", e, vars=VARS)
        self.assertEqual(
            r.prints,
            [
                "heartbeat due 2026-03-01T10:00:10.000Z: late",
                "5 earlier slot(s) passed while the service was down",
            ],
        )


class ReportTest(unittest.TestCase):
    def test_names_the_day_and_the_zone(self):
        e = firing(
            "0 9 * * 1-5", "2026-03-02T08:00:00.000Z", "2026-03-02T08:00:00.010Z", timezone="Europe/Paris"
        )
        r = testing.run("handlers.py:on_report", e, vars=VARS)
        self.assertEqual(r.prints, ["weekday report of 2026-03-02 (Europe/Paris, 0 9 * * 1-5)"])


if __name__ == "__main__":
    unittest.main()
