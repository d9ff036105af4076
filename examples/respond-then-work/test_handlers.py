"""Tests of respond-then-work's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest
from unittest import mock

from workflow_sdk import testing


class RespondThenWorkTest(unittest.TestCase):
    def test_answers_202_first_then_does_the_work(self):
        with mock.patch("time.sleep") as sleep:  # the handler's sleeps, without the wait
            r = testing.run("handlers.py:on_job", testing.event("POST"), session_id="ses_job1")
        self.assertTrue(r.ok, r.error)
        self.assertEqual(r.response.status, 202)
        self.assertEqual(r.response.headers["Location"], "/jobs/ses_job1")
        self.assertEqual(r.response.json, {"job": "ses_job1"})
        self.assertEqual(len(r.outcomes), 1)
        self.assertEqual(
            r.prints,
            [f"job ses_job1: step {n} of 3 done" for n in (1, 2, 3)] + ["job ses_job1: finished"],
        )
        self.assertEqual(sleep.call_count, 3)

    def test_a_failure_after_the_response_keeps_the_response(self):
        with mock.patch("time.sleep", side_effect=[None, OSError("disk full")]):
            r = testing.run("handlers.py:on_job", testing.event("POST"))
        self.assertEqual(r.response.status, 202)  # the caller already had it
        self.assertEqual(str(r.error), "OSError: disk full")
        self.assertEqual(r.prints, [f"job {r.session_id}: step 1 of 3 done"])


if __name__ == "__main__":
    unittest.main()
