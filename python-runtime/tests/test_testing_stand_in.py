"""`testing.stand_in`: the stand-in API server a user's test starts, its routes, recording and
presets, against the client helpers with `<conn>__base_url` (tests/stand_ins for the packages
this machine's index lacks, the real packages where installed)."""

import asyncio
import gc
import json
import os
import socket
import sys
import tempfile
import threading
import unittest
import urllib.error
import urllib.request
import warnings
from unittest import mock

from workflow_sdk import testing

from .packages import installed
from .test_connections import STAND_INS, on_path

GOOGLE_MODULES = ("google", "googleapiclient", "gspread", "cryptography", "httplib2", "google_auth_httplib2")


def call(method, url, body=None, headers=None, form=None):
    """`(status, headers, parsed body)`; an error status is returned, not raised."""
    headers = dict(headers or {})
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            raw, status, got = r.read(), r.status, r.headers
    except urllib.error.HTTPError as e:
        raw, status, got = e.read(), e.code, e.headers
    kind = got.get("Content-Type", "")
    if not raw:
        return status, got, None
    return status, got, json.loads(raw) if kind.startswith("application/json") else raw.decode()


class ServerTest(unittest.TestCase):
    def test_declared_routes_answer_and_every_request_is_recorded(self):
        with testing.stand_in(routes={"GET /ping": {"pong": True}}) as api:
            api.route("POST", "/items/{id}/notes", lambda r: (201, {"item": r.params["id"], "got": r.json}))
            api.route("GET", "/hello", "hi there")
            api.route("DELETE", "/items/{id}", None, status=204)
            self.assertEqual(call("GET", api.url + "/ping")[::2], (200, {"pong": True}))
            status, _, body = call(
                "POST", api.url + "/items/a%20b/notes?x=1&x=2", {"n": 1}, {"X-Trace": "t1"}
            )
            self.assertEqual((status, body), (201, {"item": "a b", "got": {"n": 1}}))
            status, headers, text = call("GET", api.url + "/hello")
            self.assertEqual(
                (status, text, headers["Content-Type"]), (200, "hi there", "text/plain; charset=utf-8")
            )
            self.assertEqual(call("DELETE", api.url + "/items/3")[0], 204)
        ping, post, hello, delete = api.requests
        self.assertEqual((ping.method, ping.path, ping.status, ping.route), ("GET", "/ping", 200, "/ping"))
        self.assertEqual(
            (post.path, post.query, post.query_list),
            ("/items/a%20b/notes", {"x": "2"}, [("x", "1"), ("x", "2")]),
        )
        self.assertEqual((post.json, post.text, post.body), ({"n": 1}, '{"n": 1}', b'{"n": 1}'))
        self.assertEqual(
            (post.headers["x-trace"], post.headers.get("X-TRACE"), post.params), ("t1", "t1", {"id": "a b"})
        )
        self.assertEqual((post.status, post.reply_body), (201, {"item": "a b", "got": {"n": 1}}))
        self.assertEqual((hello.reply_body, delete.status), ("hi there", 204))
        self.assertEqual(api.calls("POST", "/items/{id}/notes"), [post])
        self.assertEqual(api.calls("GET"), [ping, hello])
        self.assertEqual(api.calls(path="/items/*"), [post, delete])

    def test_a_form_body_and_data(self):
        with testing.stand_in(routes={("POST", "/f"): {}}) as api:
            call("POST", api.url + "/f", form={"To": "+1555", "Body": "hi"})
            call("POST", api.url + "/f?a=1")
        form, query = api.requests
        self.assertEqual(
            (form.form, form.data, form.json),
            ({"To": "+1555", "Body": "hi"}, {"To": "+1555", "Body": "hi"}, None),
        )
        self.assertEqual((query.form, query.data, query.body), (None, {"a": "1"}, b""))

    def test_an_undeclared_route_is_a_404_naming_it_and_the_declared_ones(self):
        with testing.stand_in(routes={("GET", "/a"): {}, ("POST", "/b/{id}"): {}}) as api:
            status, _, body = call("GET", api.url + "/b/1?q=1")
        self.assertEqual(status, 404)
        self.assertEqual(body["error"], "stand-in: no route for GET /b/1")
        self.assertEqual(
            (body["method"], body["path"], body["routes"]), ("GET", "/b/1", ["GET /a", "POST /b/{id}"])
        )
        [request] = api.requests
        self.assertEqual((request.status, request.route), (404, None))

    def test_the_latest_route_wins_and_a_route_that_raises_is_a_500(self):
        with testing.stand_in("slack") as api:
            api.route("POST", "/api/chat.postMessage", {"ok": False, "error": "channel_not_found"})
            api.route("GET", "/boom", lambda r: 1 / 0)
            self.assertEqual(
                call("POST", api.url + "/api/chat.postMessage", {})[2]["error"], "channel_not_found"
            )
            status, _, body = call("GET", api.url + "/boom")
        self.assertEqual(status, 500)
        self.assertIn("ZeroDivisionError", body["error"])

    def test_a_function_answering_what_cannot_be_sent_is_a_500_and_chunked_bodies_are_read(self):
        import http.client

        with testing.stand_in(routes={"GET /bad": lambda r: {"x": object()}, "POST /up": {}}) as api:
            status, _, body = call("GET", api.url + "/bad")
            conn = http.client.HTTPConnection("127.0.0.1", int(api.url.rsplit(":", 1)[1]), timeout=10)
            conn.request("POST", "/up", body=iter([b'{"a":', b" 1}"]), encode_chunked=True)
            self.assertEqual(conn.getresponse().status, 200)
            conn.close()
        self.assertEqual(status, 500)
        self.assertIn("not JSON serializable", body["error"])
        up = api.requests[1]
        self.assertEqual((up.headers["Transfer-Encoding"], up.json), ("chunked", {"a": 1}))

    def test_the_tests_own_mistakes_raise_at_once(self):
        api = testing.stand_in()
        with self.assertRaisesRegex(ValueError, "starts with '/'"):
            api.route("GET", "ping", {})
        with self.assertRaisesRegex(ValueError, "status"):
            api.route("GET", "/x", (999, {}))
        with self.assertRaisesRegex(ValueError, "no preset 'slak'"):
            testing.stand_in("slak")
        with self.assertRaisesRegex(ValueError, "no query"):
            api.route("GET", "/x?a=1", {})
        with self.assertRaisesRegex(ValueError, "not a function"):
            api.route("GET", "/x", lambda r: {}, status=201)
        with self.assertRaisesRegex(TypeError, "not JSON serializable"):
            api.route("GET", "/x", {"when": object()})
        with self.assertRaisesRegex(RuntimeError, "not started"):
            api.url  # noqa: B018

    def test_concurrent_requests_are_all_recorded_and_stop_leaves_nothing_behind(self):
        before = threading.active_count()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)  # a socket never closed says so when freed
            with testing.stand_in(routes={"GET /n/{i}": lambda r: {"i": int(r.params["i"])}}) as api:
                port = int(api.url.rsplit(":", 1)[1])
                got = []
                threads = [
                    threading.Thread(target=lambda i=i: got.append(call("GET", f"{api.url}/n/{i}")[2]["i"]))
                    for i in range(24)
                ]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            api.stop()  # again: nothing to do
            gc.collect()
        self.assertEqual([str(w.message) for w in caught if w.category is ResourceWarning], [])
        self.assertEqual(sorted(got), list(range(24)))
        self.assertEqual(sorted(int(r.params["i"]) for r in api.requests), list(range(24)))
        self.assertEqual(threading.active_count(), before)
        with (
            self.assertRaises(ConnectionRefusedError),
            socket.create_connection(("127.0.0.1", port), timeout=2),
        ):
            pass

    def test_a_recording_saved_once_is_replayed(self):
        answers = iter([{"n": 1}, {"n": 2}])
        with testing.stand_in(routes={"GET /count": lambda r: next(answers), "POST /t": "plain"}) as api:
            call("GET", api.url + "/count")
            call("GET", api.url + "/count")
            call("POST", api.url + "/t", {"a": 1})
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "recording.json")
            api.save(path)
            with open(path) as f:
                saved = json.load(f)
            with testing.stand_in(replay=path) as replay:
                got = [call("GET", replay.url + "/count")[2] for _ in range(3)]
                text = call("POST", replay.url + "/t")[2]
        self.assertEqual(saved["exchanges"][2]["request"]["body"], {"text": '{"a": 1}'})
        self.assertEqual(got, [{"n": 1}, {"n": 2}, {"n": 2}])
        self.assertEqual(text, "plain")

    def test_docstring_examples(self):
        import doctest
        import importlib

        module = importlib.import_module("workflow_sdk.testing.api_stand_in")
        self.assertEqual(doctest.testmod(module).failed, 0)

    def test_run_as_a_program_it_serves_until_stdin_closes_then_saves(self):
        import subprocess

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "out.json")
            cmd = [sys.executable, "-m", "workflow_sdk.testing.serve_stand_in", "telegram", "--save", path]
            here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            with subprocess.Popen(
                cmd, cwd=here, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            ) as p:
                started = json.loads(p.stdout.readline())
                got = call("POST", started["url"] + "/bot1:x/getMe")[2]
                p.stdin.close()
                self.assertEqual(p.wait(timeout=10), 0)
            with open(path) as f:
                [exchange] = json.load(f)["exchanges"]
        self.assertEqual((started["presets"], got["result"]["is_bot"]), (["telegram"], True))
        self.assertEqual(exchange["request"]["path"], "/bot1:x/getMe")


class EnvTest(unittest.TestCase):
    def test_each_presets_base_url_and_credentials(self):
        with testing.stand_in(
            "slack", "telegram", "google", "discord", "jira", "confluence", "twilio"
        ) as api:
            u = api.url
            self.assertEqual(
                api.env("s", "slack"), {"s__base_url": u + "/api/", "s__oauth_access_token": "xoxb-stand-in"}
            )
            self.assertEqual(api.env("t", "telegram")["t__base_url"], u)
            self.assertEqual(api.env("g", "sheets")["g__base_url"], u + "/")
            self.assertEqual(api.env("g", "calendar")["g__base_url"], u + "/calendar/v3/")
            self.assertEqual(api.env("g", "drive")["g__base_url"], u + "/drive/v3/")
            with self.assertRaisesRegex(ValueError, "which Google API"):
                api.env("g", "google")
            self.assertEqual(api.env("g", "gmail")["g__auth_type"], "oauth")
            self.assertEqual(api.env("d", "discord")["d__base_url"], u + "/api/v10")
            self.assertEqual(api.env("j", "jira")["j__base_url"], u)
            self.assertEqual(api.env("c", "confluence")["c__base_url"], u + "/wiki")
            self.assertEqual(api.env("w", "twilio")["w__base_url"], u)
            self.assertEqual(api.env("h", "github"), {"h__base_url": u, "h__pat": "ghp_stand-in"})
            with self.assertRaisesRegex(ValueError, "which preset"):
                api.env("s")
            with self.assertRaisesRegex(ValueError, "Invalid AutoKitteh connection name"):
                api.env("my-conn", "slack")
        with testing.stand_in() as bare:
            self.assertEqual(bare.env("x"), {"x__base_url": bare.url})


class PresetTest(unittest.TestCase):
    """Each preset answers what its client sends, through the client helper where one runs here."""

    def test_slack_through_slack_client(self):
        with (
            testing.stand_in("slack") as api,
            on_path(STAND_INS, "slack_sdk"),
            mock.patch.dict(os.environ, api.env("sl")),
        ):
            from workflow_sdk.slack import slack_client

            posted = slack_client("sl").chat_postMessage(channel="C1", text="hi", thread_ts="1.2")
            # conversations.replies and users.info as slack_sdk sends them: GET with query params
            _, _, replies = call(
                "GET",
                api.url + "/api/conversations.replies?channel=C1&ts=1.2",
                headers={"Authorization": "Bearer xoxb-stand-in"},
            )
            _, _, user = call("GET", api.url + "/api/users.info?user=U7")
        self.assertEqual(
            (posted["ok"], posted["channel"], posted["message"]["thread_ts"]), (True, "C1", "1.2")
        )
        self.assertEqual((replies["ok"], replies["messages"]), (True, []))
        self.assertEqual(user["user"]["id"], "U7")
        [auth] = api.calls("POST", "/api/auth.test")
        [post] = api.calls("POST", "/api/chat.postMessage")
        self.assertEqual(auth.headers["Authorization"], "Bearer xoxb-stand-in")
        self.assertEqual(post.json, {"channel": "C1", "text": "hi", "thread_ts": "1.2"})

    def test_telegram_through_telegram_client(self):
        with (
            testing.stand_in("telegram") as api,
            on_path(STAND_INS, "telegram", "standin_http"),
            mock.patch.dict(os.environ, api.env("tg")),
        ):
            from workflow_sdk.telegram import telegram_client

            bot = telegram_client("tg")
            me = asyncio.run(bot.get_me())
            sent = asyncio.run(bot.send_message(chat_id=42, text="hello"))
            # setWebhook as python-telegram-bot posts it: form fields
            _, _, hooked = call(
                "POST", f"{api.url}/bot100000001:stand-in/setWebhook", form={"url": "https://h/x"}
            )
        self.assertEqual(me["username"], "stand_in_bot")
        self.assertEqual((sent["chat"]["id"], sent["text"]), (42, "hello"))
        self.assertTrue(hooked["result"])
        self.assertEqual(
            [r.path for r in api.requests],
            [
                "/bot100000001:stand-in/getMe",
                "/bot100000001:stand-in/sendMessage",
                "/bot100000001:stand-in/setWebhook",
            ],
        )
        self.assertEqual(
            api.calls("POST", "/bot{token}/sendMessage")[0].json, {"chat_id": 42, "text": "hello"}
        )

    def test_discord_through_discord_client(self):
        with (
            testing.stand_in("discord") as api,
            on_path(STAND_INS, "discord", "standin_http"),
            mock.patch.dict(os.environ, api.env("dc")),
        ):
            from workflow_sdk.discord import bot_token, discord_client

            client = discord_client("dc")
            asyncio.run(client.login(bot_token("dc")))
            import discord

            url = discord.http.Route("POST", "/channels/77/messages").url
            _, _, message = call("POST", url, {"content": "hi"}, {"Authorization": "Bot stand-in-bot-token"})
        self.assertEqual(client.user["username"], "stand-in-bot")
        self.assertEqual((message["channel_id"], message["content"]), ("77", "hi"))
        self.assertEqual(
            [r.path for r in api.requests], ["/api/v10/users/@me", "/api/v10/channels/77/messages"]
        )
        self.assertEqual(api.requests[0].headers["Authorization"], "Bot stand-in-bot-token")

    def test_twilio_through_twilio_client(self):
        with (
            testing.stand_in("twilio") as api,
            on_path(STAND_INS, "twilio"),
            mock.patch.dict(os.environ, api.env("tw")),
        ):
            from workflow_sdk.twilio import twilio_client

            message = twilio_client("tw").messages.create(to="+15550001", from_="+15550002", body="hi")
        self.assertEqual((message["to"], message["body"], message["status"]), ("+15550001", "hi", "queued"))
        [post] = api.calls("POST", "/2010-04-01/Accounts/{account}/Messages.json")
        self.assertEqual((post.status, post.form["From"]), (201, "+15550002"))
        self.assertTrue(post.headers["Authorization"].startswith("Basic "))

    def test_github_through_github_client(self):
        folder = installed("PyGithub", "github")
        with (
            testing.stand_in("github") as api,
            on_path(folder, "github"),
            mock.patch.dict(os.environ, api.env("gh")),
        ):
            from workflow_sdk.github import github_client

            repo = github_client("gh").get_repo("octo/cats")
            issue = repo.create_issue(title="Feed the cat", body="at 6")
            comment = issue.create_comment("done")
            issue.add_to_labels("chores")
        self.assertEqual(
            (repo.full_name, issue.number, issue.title, comment.body),
            ("octo/cats", 1, "Feed the cat", "done"),
        )
        self.assertEqual(
            [f"{r.method} {r.path} {r.status}" for r in api.requests],
            [
                "GET /repos/octo/cats 200",
                "POST /repos/octo/cats/issues 201",
                "POST /repos/octo/cats/issues/1/comments 201",
                "POST /repos/octo/cats/issues/1/labels 200",
            ],
        )
        self.assertRegex(api.requests[1].headers["Authorization"], "^(token|Bearer) ghp_stand-in$")
        self.assertEqual(api.requests[1].json, {"title": "Feed the cat", "body": "at 6"})

    def test_jira_and_confluence_as_atlassian_python_api_calls_them(self):
        # atlassian-python-api is not installed here: its calls, made with requests as it makes them
        # (a Session with basic auth, JSON bodies, `rest/api/…` under the site's URL).
        import requests

        with testing.stand_in("jira", "confluence") as api, requests.Session() as http:
            jira, wiki = api.env("jr", "jira"), api.env("cf", "confluence")
            http.auth = (jira["jr__Email"], jira["jr__Token"])
            fields = {"project": {"key": "OPS"}, "summary": "Disk full", "issuetype": {"name": "Task"}}
            created = http.post(jira["jr__base_url"] + "/rest/api/2/issue", json={"fields": fields})
            issue = http.get(f"{jira['jr__base_url']}/rest/api/2/issue/{created.json()['key']}").json()
            pages = http.get(
                wiki["cf__base_url"] + "/rest/api/content", params={"spaceKey": "X", "title": "T"}
            )
            storage = {"storage": {"value": "<p/>", "representation": "storage"}}
            page = {"type": "page", "title": "T", "space": {"key": "X"}, "body": storage}
            made = http.post(wiki["cf__base_url"] + "/rest/api/content", json=page).json()
        self.assertEqual((created.status_code, created.json()["key"]), (201, "OPS-1"))
        self.assertEqual((issue["key"], issue["fields"]["status"]["name"]), ("OPS-1", "To Do"))
        self.assertEqual((pages.json()["results"], made["title"], made["type"]), ([], "T", "page"))
        self.assertEqual(api.calls("GET", "/wiki/rest/api/content")[0].query, {"spaceKey": "X", "title": "T"})
        self.assertTrue(all(r.headers["Authorization"].startswith("Basic ") for r in api.requests))

    def test_declared_routes_answer_openai_over_httpx(self):
        # No preset: a route of the test's own, the real openai client (httpx) through the helper.
        completion = {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-test",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "meow"}}
            ],
        }
        with (
            testing.stand_in(routes={"POST /v1/chat/completions": completion}) as api,
            on_path(installed("openai", "openai"), "openai", "httpx", "pydantic", "anyio"),
            mock.patch.dict(os.environ, {"oa__apiKey": "sk-test", "oa__base_url": api.url + "/v1"}),
        ):
            from workflow_sdk.openai import openai_client

            client = openai_client("oa")
            answer = client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}]
            )
            with self.assertRaises(Exception) as missing:
                client.models.list()
        self.assertEqual(answer.choices[0].message.content, "meow")
        [post] = api.calls("POST", "/v1/chat/completions")
        self.assertEqual((post.json["model"], post.headers["Authorization"]), ("gpt-test", "Bearer sk-test"))
        self.assertEqual(getattr(missing.exception, "status_code", None), 404)
        self.assertEqual(api.requests[-1].path, "/v1/models")

    def test_the_example_of_docs_testing_md(self):
        import re

        with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "testing.md")) as f:
            [handlers] = re.findall(r"```python\n# alerts.py, the handler\n(.*?)```", f.read(), re.S)
        with tempfile.TemporaryDirectory() as folder, on_path(STAND_INS, "slack_sdk"):
            with open(os.path.join(folder, "alerts.py"), "w") as f:
                f.write(handlers)
            with testing.stand_in("slack") as api:  # test_alerts.py's lines
                result = testing.run(
                    "alerts.py:on_alert",
                    testing.event(json={"text": "disk full"}),
                    vars=api.env("slack_conn"),
                    project_dir=folder,
                )
        self.assertTrue(result.ok, result.error)
        [post] = api.calls("POST", "/api/chat.postMessage")
        self.assertEqual(post.json, {"channel": "C1", "text": "disk full"})


class GooglePresetTest(unittest.TestCase):
    """The real google-api-python-client and gspread, through the helpers, with api.env's OAuth token."""

    def setUp(self):
        # Its google-auth is the one of the folder on the path when it was imported: each test's own.
        sys.modules.pop("workflow_sdk.google_credentials", None)
        self.addCleanup(sys.modules.pop, "workflow_sdk.google_credentials", None)

    def test_calendar_drive_sheets_and_gmail(self):
        folder = installed("google-api-python-client", "googleapiclient.discovery")
        with testing.stand_in("google") as api, on_path(folder, *GOOGLE_MODULES), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # httplib2's use of pyparsing's old names
            envs = {**api.env("gc", "calendar"), **api.env("gd", "drive"), **api.env("gs", "sheets")}
            with mock.patch.dict(os.environ, {**envs, **api.env("gm", "gmail")}):
                from workflow_sdk import google

                cal = google.google_calendar_client("gc").events()
                listed = cal.list(calendarId="primary", maxResults=5).execute()
                inserted = cal.insert(calendarId="primary", body={"summary": "Standup"}).execute()
                files = google.google_drive_client("gd").files().list(q="name='x'").execute()
                values = google.google_sheets_client("gs").spreadsheets().values()
                got = values.get(spreadsheetId="s1", range="Sheet1!A1:B2").execute()
                appended = values.append(
                    spreadsheetId="s1",
                    range="Sheet1!A1",
                    valueInputOption="RAW",
                    body={"values": [["a", "b"]]},
                ).execute()
                sent = (
                    google.gmail_client("gm")
                    .users()
                    .messages()
                    .send(userId="me", body={"raw": "eA=="})
                    .execute()
                )
                mails = google.gmail_client("gm").users().messages().list(userId="me").execute()
        self.assertEqual(
            (listed["items"], inserted["summary"], inserted["status"]), ([], "Standup", "confirmed")
        )
        self.assertEqual(
            (files["files"], got["range"], appended["updates"]["updatedCells"]), ([], "Sheet1!A1:B2", 2)
        )
        self.assertEqual((sent["labelIds"], mails["resultSizeEstimate"]), (["SENT"], 0))
        self.assertEqual({r.status for r in api.requests}, {200})
        self.assertEqual({r.headers["Authorization"] for r in api.requests}, {"Bearer ya29.stand-in"})
        [get] = api.calls("GET", "/calendar/v3/calendars/{calendar}/events")
        self.assertEqual((get.params, get.query["maxResults"]), ({"calendar": "primary"}, "5"))
        self.assertEqual(api.calls("POST", "/gmail/v1/users/{user}/messages/send")[0].json, {"raw": "eA=="})

    def test_gspread_opens_appends_and_reads(self):
        folder = installed("gspread", "gspread")
        with testing.stand_in("sheets") as api, on_path(folder, *GOOGLE_MODULES, "requests", "urllib3"):
            with mock.patch.dict(os.environ, api.env("gs")):
                from workflow_sdk.google import gspread_client

                sheet = gspread_client("gs").open_by_key("s9").sheet1
                sheet.append_row(["x", 1])
                rows = sheet.get_all_values()
        self.assertEqual((sheet.title, rows), ("Sheet1", [["x", "1"]]))
        [append] = api.calls("POST", "/v4/spreadsheets/{id}/values/{range}:append")
        self.assertEqual((append.params["id"], append.json["values"]), ("s9", [["x", 1]]))


if __name__ == "__main__":
    unittest.main()
