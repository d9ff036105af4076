"""Tests of slack-bot's handler with workflow_sdk.testing (run: python3 -m unittest, see docs/testing.md).

The Slack client is replaced by a fake that records the messages it is asked to post, so these
run without slack_sdk or a network; python-runtime/tests/test_connections.py runs the helper
against a stand-in Slack API.
"""

import unittest
from unittest import mock

from workflow_sdk import testing


class FakeSlack:
    def __init__(self):
        self.posted = []

    def chat_postMessage(self, **kwargs):
        self.posted.append(kwargs)
        return {"ok": True}


def mention(**fields):
    return testing.slack_event(
        {"type": "app_mention", "user": "U1", "channel": "C9", "ts": "100.1", **fields}
    )


class SlackBotTest(unittest.TestCase):
    def run_handler(self, event):
        fake = FakeSlack()
        with mock.patch(
            "workflow_sdk.slack.slack_client", lambda conn: fake if conn == "slack_conn" else None
        ):
            r = testing.run("handlers.py:on_app_mention", event)
        self.assertTrue(r.ok, r.error)
        return fake.posted

    def test_a_mention_is_answered_in_a_new_thread(self):
        [post] = self.run_handler(mention(text="<@UBOT> where is the runbook?"))
        self.assertEqual(
            post,
            {
                "channel": "C9",
                "thread_ts": "100.1",
                "text": "<@U1> asked: 'where is the runbook?'. I'll look into it.",
            },
        )

    def test_a_mention_in_a_thread_is_answered_there(self):
        [post] = self.run_handler(mention(text="<@UBOT>", thread_ts="99.0"))
        self.assertEqual((post["thread_ts"], post["text"]), ("99.0", "Hi <@U1>! Mention me with a question."))

    def test_another_bot_gets_no_answer(self):
        self.assertEqual(self.run_handler(mention(text="<@UBOT> hi", bot_id="B2")), [])


if __name__ == "__main__":
    unittest.main()
