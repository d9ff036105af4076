"""Tests of activity-client's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing


class ActivityClientTest(unittest.TestCase):
    def test_the_count_comes_back_from_one_activity(self):
        r = testing.run(
            "handlers.py:on_store",
            testing.event("POST", body="first note"),
            mock_activities={"handlers.save_and_count": lambda text: 7},
        )
        self.assertEqual((r.response.status, r.response.json), (201, {"notes": 7}))
        [call] = r.activities
        self.assertEqual((call.name, call.args, call.result), ("handlers.save_and_count", ("first note",), 7))

    def test_a_real_run_counts_up_with_picklable_values_only(self):
        # The real activity (sqlite in the temp folder): arguments and result go through pickle,
        # as in a session; the connection never leaves the activity.
        first = testing.run("handlers.py:on_store", testing.event("POST", body="a"))
        second = testing.run("handlers.py:on_store", testing.event("POST", body="b"))
        self.assertTrue(first.ok and second.ok, first.error or second.error)
        self.assertEqual(second.response.json["notes"], first.response.json["notes"] + 1)

    def test_a_body_that_is_not_text_stores_an_empty_note(self):
        r = testing.run(
            "handlers.py:on_store",
            testing.event("POST", body=b"\xff"),
            mock_activities={"handlers.save_and_count": lambda text: len(text)},
        )
        self.assertEqual(r.activities[0].args, ("",))
        self.assertEqual(r.response.json, {"notes": 0})

    def test_an_activity_failure_is_the_session_error(self):
        def broken(text):
            raise OSError("database is locked")

        r = testing.run(
            "handlers.py:on_store",
            testing.event("POST", body="x"),
            mock_activities={"handlers.save_and_count": broken},
        )
        self.assertEqual(str(r.error), "OSError: database is locked")
        self.assertIsNone(r.response)


if __name__ == "__main__":
    unittest.main()
