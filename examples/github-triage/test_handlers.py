"""Tests of github-triage's handler with workflow_sdk.testing (run: python3 -m unittest, see docs/testing.md).

The GitHub client is replaced by a fake that records what the handler asks of it, so these run
without PyGithub or a network; python-runtime/tests/test_connections.py runs the real client
against a stand-in GitHub API.
"""

import types
import unittest
from unittest import mock

from workflow_sdk import testing

PAYLOAD = {
    "action": "opened",
    "number": 7,
    "pull_request": {"number": 7, "draft": False, "body": "Adds a thing.", "user": {"login": "ada"}},
    "repository": {"full_name": "octo/widgets"},
}


class FakeGitHub:
    """What the handler uses of PyGithub: get_repo → get_issue → create_comment."""

    def __init__(self):
        self.calls = []

    def get_repo(self, name):
        self.calls.append(("get_repo", name))
        return self

    def get_issue(self, number):
        self.calls.append(("get_issue", number))
        return self

    def create_comment(self, body):
        self.calls.append(("create_comment", body))
        return types.SimpleNamespace(html_url="https://github.com/octo/widgets/pull/7#issuecomment-1")


class TriageTest(unittest.TestCase):
    def run_handler(self, payload):
        fake = FakeGitHub()
        with mock.patch(
            "workflow_sdk.github.github_client", lambda conn: fake if conn == "github_conn" else None
        ):
            r = testing.run("handlers.py:on_pr_opened", testing.github_event("pull_request", payload))
        return r, fake

    def test_an_opened_pull_request_gets_the_checklist(self):
        r, fake = self.run_handler(PAYLOAD)
        self.assertTrue(r.ok, r.error)
        [repo, issue, (kind, body)] = fake.calls
        self.assertEqual(
            (repo, issue, kind), (("get_repo", "octo/widgets"), ("get_issue", 7), "create_comment")
        )
        self.assertTrue(
            body.startswith("Thanks @ada! Before review, please check:\n- [ ] tests for the change")
        )
        self.assertNotIn("draft", body)
        self.assertEqual(r.prints, ["commented on #7: https://github.com/octo/widgets/pull/7#issuecomment-1"])

    def test_a_draft_is_told_so(self):
        draft = {**PAYLOAD, "pull_request": {**PAYLOAD["pull_request"], "draft": True}}
        _, fake = self.run_handler(draft)
        self.assertTrue(fake.calls[-1][1].endswith("(This is a draft: mark it ready when it is.)"))

    def test_without_the_token_the_session_says_which_var_to_set(self):
        r = testing.run("handlers.py:on_pr_opened", testing.github_event("pull_request", PAYLOAD))
        self.assertEqual(r.error.type, "ConnectionInitError")
        self.assertIn("set github_conn__pat", r.error.message)


if __name__ == "__main__":
    unittest.main()
