"""workflow_sdk.testing's connection events: the shapes docs/connection-clients.md promises."""

import doctest
import unittest

from workflow_sdk import testing


class GitHubEventsTest(unittest.TestCase):
    def test_the_payload_is_the_data_and_the_header_the_type(self):
        payload = {"action": "opened", "number": 7, "pull_request": {"number": 7, "body": "Fixes #1"}}
        e = testing.github_event("pull_request", payload)
        self.assertEqual(e.event_type, "pull_request")
        self.assertEqual(e.data.pull_request.number, 7)
        self.assertEqual(e.data.slash_commands, [])
        self.assertEqual(e["data"]["action"], "opened")
        self.assertTrue(e.event_id.startswith("evt_"))
        payload["action"] = "changed"  # the event keeps its own copy
        self.assertEqual(e.data.action, "opened")

    def test_one_slash_command_event_per_command_line(self):
        body = "Please\n/deploy prod  --fast \n```\n/ignored in code\n```\n  /indented is not one\n/\n/retest"
        first, *more = testing.github_events(
            "issue_comment", {"action": "created", "comment": {"body": body}}
        )
        self.assertEqual(
            first.data.slash_commands,
            [
                {"name": "deploy", "args": ["prod", "--fast"], "raw": "/deploy prod  --fast"},
                {"name": "retest", "args": [], "raw": "/retest"},
            ],
        )
        self.assertEqual([e.event_type for e in more], ["slash_command", "slash_command"])
        # AutoKitteh's shape: the command, and the delivery's own data and event type.
        self.assertEqual([e.data.command["name"] for e in more], ["deploy", "retest"])
        self.assertEqual(more[0].data.command.args, ["prod", "--fast"])
        self.assertEqual(more[0].data.actual_event_type, "issue_comment")
        self.assertEqual(more[0].data.actual_data.comment.body, body)
        self.assertEqual(more[0].data.actual_data.slash_commands, first.data.slash_commands)
        self.assertEqual(set(more[0].data), {"command", "actual_data", "actual_event_type"})

    def test_at_most_16_commands_of_one_text(self):
        body = "\n".join(f"/c{i}" for i in range(20))
        first, *more = testing.github_events("issue_comment", {"comment": {"body": body}})
        self.assertEqual(len(first.data.slash_commands), 16)
        self.assertEqual(more[-1].data.command.name, "c15")

    def test_google_events(self):
        cal = testing.google_calendar_events(
            [
                {"id": "a", "status": "confirmed", "sequence": 0, "htmlLink": "h"},
                {"id": "b", "status": "confirmed", "sequence": 1},
                {"id": "c", "status": "cancelled"},
            ]
        )
        self.assertEqual([e.event_type for e in cal], ["event_created", "event_updated", "event_deleted"])
        self.assertEqual((cal[0].data.html_link, cal[1].data.description), ("h", ""))
        drive = testing.google_drive_events([{"fileId": "f", "file": {"mimeType": "x"}}, {"removed": True}])
        self.assertEqual([e.event_type for e in drive], ["file_change", "file_remove"])
        self.assertEqual(drive[0].data.file.mime_type, "x")
        with self.assertRaises(TypeError):
            testing.google_drive_events({"fileId": "f"})

    def test_jira_event(self):
        e = testing.jira_event({"webhookEvent": "jira:issue_created", "issue": {"key": "OPS-7"}})
        self.assertEqual((e.event_type, e.data.issue.key), ("issue_created", "OPS-7"))
        self.assertEqual(
            testing.jira_event({"webhookEvent": "comment_created"}).event_type, "comment_created"
        )
        with self.assertRaises(ValueError):
            testing.jira_event({"issue": {}})

    def test_confluence_event(self):
        e = testing.confluence_event("created", {"page": {"id": 7, "spaceKey": "OPS"}})
        self.assertEqual((e.event_type, e.data.page.spaceKey), ("page_created", "OPS"))
        removed = testing.confluence_event("removed", {"attachments": []})
        self.assertEqual(removed.event_type, "attachment_removed")
        with self.assertRaises(ValueError):
            testing.confluence_event("created", {"timestamp": 1})
        with self.assertRaises(ValueError):
            testing.confluence_event("exploded", {"page": {}})

    def test_telegram_event(self):
        e = testing.telegram_event({"update_id": 3, "callback_query": {"data": "yes"}})
        self.assertEqual((e.event_type, e.data.callback_query.data), ("callback_query", "yes"))
        self.assertEqual(testing.telegram_event({"update_id": 4}).event_type, "unknown telegram event")

    def test_discord_event(self):
        e = testing.discord_event("MESSAGE_CREATE", {"content": "hi", "author": {"id": "7"}})
        self.assertEqual((e.event_type, e.data.content, e.data.author.id), ("message_create", "hi", "7"))
        self.assertEqual(testing.discord_event("thread_create", {"id": "1"}).event_type, "thread_create")
        with self.assertRaises(ValueError):
            testing.discord_event("TYPING_START", {})

    def test_event_types_without_markdown_have_no_slash_commands(self):
        e = testing.github_event("push", {"ref": "refs/heads/main"})
        self.assertNotIn("slash_commands", e.data)
        self.assertEqual(testing.github_events("push", {"ref": "x"})[1:], [])


class SlackEventsTest(unittest.TestCase):
    def test_events_api_defaults_and_kept_values(self):
        e = testing.slack_event({"type": "message", "text": "hi", "user": "U1", "ts": "1.1", "bot_id": "B9"})
        self.assertEqual(
            (e.event_type, e.data.subtype, e.data.thread_ts, e.data.bot_id), ("message", "", "", "B9")
        )

    def test_slash_command_and_interaction(self):
        c = testing.slack_slash_command("/deploy", "prod", user_id="U1", channel_id="C1")
        self.assertEqual(
            (c.event_type, dict(c.data)),
            ("slash_command", {"command": "/deploy", "text": "prod", "user_id": "U1", "channel_id": "C1"}),
        )
        i = testing.slack_interaction({"type": "block_actions", "actions": [{"action_id": "ok"}]})
        self.assertEqual((i.event_type, i.data.actions[0].action_id), ("interaction", "ok"))
        with self.assertRaises(TypeError):
            testing.slack_slash_command("/x", 5)
        with self.assertRaises(ValueError):
            testing.slack_event({"text": "no type"})

    def test_a_handler_reads_them_as_autokitteh_programs_do(self):
        def on_mention(event):
            if event.data.bot_id == "":
                print("reply in", event.data.thread_ts or event.data.ts)

        r = testing.run(
            on_mention, testing.slack_event({"type": "app_mention", "ts": "5.5", "text": "<@U0> hi"})
        )
        self.assertTrue(r.ok, r.error)
        self.assertEqual(r.prints, ["reply in 5.5"])


class HttpEventsTest(unittest.TestCase):
    def test_an_http_connection_event_is_a_webhook_event(self):
        e = testing.http_event("PUT", "/items/1", json={"n": 1})
        self.assertEqual(
            (e.event_type, e.data.method, e.data.url.path_suffix, e.data.body.json),
            ("put", "PUT", "items/1", {"n": 1}),
        )
        # Under the connection's inbound URL, as the service builds it (test/connection-shapes.test.ts).
        self.assertEqual(e.data.url.path, f"/inbound/{testing.INBOUND_ID}/items/1")
        full = testing.http_event("GET", "/inbound/01hzzzzzzzzzzzzzzzzzzzzzzz/a?b=1")
        self.assertEqual(
            (full.data.url.path_suffix, full.data.raw_url),
            ("a", "/inbound/01hzzzzzzzzzzzzzzzzzzzzzzz/a?b=1"),
        )


class DocsTest(unittest.TestCase):
    def test_docstring_examples(self):
        from workflow_sdk import connections, github, google, slack
        from workflow_sdk.testing import connections as kit

        for module in (kit, connections, slack, google, github):
            self.assertEqual(doctest.testmod(module).failed, 0, module.__name__)


if __name__ == "__main__":
    unittest.main()
