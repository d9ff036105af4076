"""Tests of async-activity's handler with workflow_sdk.testing.

Run: python3 -m unittest (see docs/testing.md).
"""

import unittest

from workflow_sdk import testing


class AsyncActivityTest(unittest.TestCase):
    def test_each_word_is_looked_up_by_the_async_activity(self):
        r = testing.run("handlers.py:on_fanout", testing.event("POST", body="hooks are fun"))
        self.assertTrue(r.ok, r.error)
        self.assertEqual(
            r.response.json,
            {
                "results": [
                    {"word": "hooks", "length": 5},
                    {"word": "are", "length": 3},
                    {"word": "fun", "length": 3},
                ]
            },
        )
        self.assertEqual([a.name for a in r.activities], ["handlers.lookup"] * 3)
        self.assertEqual([a.args for a in r.activities], [("hooks",), ("are",), ("fun",)])
        self.assertEqual(r.prints, ["looked up 3 words"])

    def test_an_empty_body_looks_up_hello(self):
        r = testing.run("handlers.py:on_fanout", testing.event("POST"))
        self.assertEqual(r.response.json, {"results": [{"word": "hello", "length": 5}]})

    def test_a_mocked_async_activity(self):
        async def fake(word):
            return {"word": word, "length": -1}

        r = testing.run(
            "handlers.py:on_fanout",
            testing.event("POST", body="x"),
            mock_activities={"handlers.lookup": fake},
        )
        self.assertEqual(r.response.json, {"results": [{"word": "x", "length": -1}]})


if __name__ == "__main__":
    unittest.main()
