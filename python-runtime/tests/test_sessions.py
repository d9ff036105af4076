"""Sessions end to end through the real fork server, with the fake service from harness.py."""

import base64
import os
import pickle
import tempfile
import unittest

from .harness import FakeService, ForkServer, make_event


class SessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def run_session(self, handler, **kwargs):
        files = kwargs.pop("files", {})
        return self.server.run({"handlers.py": handler, **files}, **kwargs)

    def assertDoneOk(self, result):
        self.assertEqual(result.done, {"type": "done", "ok": True}, result.messages)

    def assertDoneError(self, result, *fragments):
        done = result.done
        self.assertIsNotNone(done, result.messages)
        self.assertFalse(done["ok"], result.messages)
        for fragment in fragments:
            self.assertIn(fragment, done["error"])
        return done

    # -- basics -------------------------------------------------------------------------------

    def test_hello_prints_outcome_done(self):
        r = self.run_session(
            """
            import os
            import workflow_sdk
            print("import", os.environ["GREETING"])
            def on_post(event):
                print("body", event.data.body.json["a"], event.data.body.bytes)
                workflow_sdk.http_outcome(201, {"Location": "/x"}, json={"ok": True})
                workflow_sdk.http_outcome(200, "done", more=True)
            """,
            env={"GREETING": "hi"},
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["import hi", "body 1 b'{\"a\": 1}'"])
        first, second = r.outcomes
        self.assertEqual(first["status_code"], 201)
        self.assertEqual(first["headers"], {"Location": "/x", "Content-Type": "application/json"})
        self.assertEqual(base64.b64decode(first["body"]), b'{"ok":true}')
        self.assertFalse(first["more"])
        self.assertEqual(base64.b64decode(second["body"]), b"done")
        self.assertTrue(second["more"])

    def test_handler_error_gives_traceback(self):
        r = self.run_session("def on_post(event):\n    raise KeyError('boom')\n")
        done = self.assertDoneError(r, "KeyError: 'boom'")
        self.assertIn("handlers.py", done["traceback"])
        self.assertNotIn("workflow_sdk/runner", done["traceback"])

    def test_missing_function(self):
        r = self.run_session("x = 1\n", entry="handlers.py:nope")
        self.assertDoneError(r, "nope")

    def test_package_entry(self):
        r = self.server.run(
            {"pkg/__init__.py": "", "pkg/mod.py": "def h(e):\n    print('pkg')\n"}, entry="pkg/mod.py:h"
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["pkg"])

    def test_http_outcome_value_error_in_handler(self):
        r = self.run_session("import workflow_sdk\ndef on_post(e):\n    workflow_sdk.http_outcome(700)\n")
        self.assertDoneError(r, "ValueError")

    # -- print capture ------------------------------------------------------------------------

    def test_print_capture_everywhere(self):
        r = self.run_session(
            """
            import os, subprocess, sys, workflow_sdk
            print("at import")
            @workflow_sdk.activity
            def act():
                print("in activity")
                return 1
            def on_post(event):
                print("partial", end="")
                print(" line")
                print()
                print("to stderr", file=sys.stderr)
                act()
                os.write(1, b"fd one\\n")
                os.write(2, b"fd two\\nno newline")
                subprocess.run(["echo", "from child"])
                sys.stdout.write("flushed")
                sys.stdout.flush()
            """
        )
        self.assertDoneOk(r)
        prints = [(m["text"], m["stream"]) for m in r.of("print")]
        for expected in [
            ("at import", "stdout"),
            ("partial line", "stdout"),
            ("", "stdout"),
            ("to stderr", "stderr"),
            ("in activity", "stdout"),
            ("fd one", "stdout"),
            ("fd two", "stderr"),
            ("no newline", "stderr"),
            ("from child", "stdout"),
            ("flushed", "stdout"),
        ]:
            self.assertIn(expected, prints)
        self.assertLess(prints.index(("partial line", "stdout")), prints.index(("in activity", "stdout")))

    # -- activities ---------------------------------------------------------------------------

    def test_activity_rules(self):
        r = self.run_session(
            """
            import datetime, json, os, time, workflow_sdk
            import helper
            STAMP = time.time()          # module level: not an activity
            CONFIG = helper.load()        # calls inside, while importing: not activities
            @workflow_sdk.activity
            def outer():
                time.sleep(0.001)         # inside an activity: not another one
                return os.getpid()
            def on_post(event):
                json.dumps([len("x")])    # pure / builtin
                helper.local()            # project code
                datetime.datetime.now()   # an activity
                time.sleep(0.001)
                outer()
            """,
            files={
                "helper.py": "import os, time\ndef load():\n    return os.getenv('X'), time.time()\n"
                "def local():\n    return 1\n"
            },
        )
        self.assertDoneOk(r)
        names = [m["function"] for m in r.of("activity")]
        self.assertEqual(names, ["datetime.datetime.now", "time.sleep", "handlers.outer"])
        self.assertEqual([m["id"] for m in r.of("activity")], [1, 2, 3])  # the ids of their starts
        self.assertTrue(all(m["ok"] and m["duration_ms"] >= 0 for m in r.of("activity")))

    def test_an_activity_still_running_at_50_ms_is_told_before_its_report(self):
        r = self.run_session(
            """
            import time, workflow_sdk
            @workflow_sdk.activity
            def pack(seconds):
                time.sleep(seconds)
            def on_post(event):
                pack(0)      # ends at once: only its report
                pack(0.4)    # still running when the watchdog looks: told, then reported
            """
        )
        self.assertDoneOk(r)
        told = [(m["type"], m.get("id")) for m in r.messages if m["type"].startswith("activity")]
        self.assertEqual(told, [("activity", 1), ("activity_started", 2), ("activity", 2)])
        (start,) = r.of("activity_started")
        self.assertEqual(start["function"], "handlers.pack")
        self.assertGreaterEqual(start["running_ms"], 50)

    def test_activity_error_is_raised_in_handler_and_reported(self):
        r = self.run_session(
            """
            import os
            def on_post(event):
                try:
                    os.stat("/no/such/file")
                except FileNotFoundError as e:
                    print("caught", type(e).__name__)
            """
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["caught FileNotFoundError"])
        (report,) = r.of("activity")
        self.assertFalse(report["ok"])
        self.assertTrue(report["error"].startswith("FileNotFoundError"))

    def test_async_handler_with_async_activities(self):
        r = self.run_session(
            """
            import asyncio, workflow_sdk
            @workflow_sdk.activity
            async def double(x):
                await asyncio.sleep(0.01)
                return x * 2
            def from_loop():
                return double(5)          # called while the loop runs: an awaitable
            async def on_post(event):
                a, b = await asyncio.gather(double(1), double(2))
                print(a, b, await from_loop())
            """
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["2 4 10"])
        self.assertEqual([m["function"] for m in r.of("activity")], ["handlers.double"] * 3)

    def test_sync_handler_with_async_activity(self):
        r = self.run_session(
            """
            import workflow_sdk
            @workflow_sdk.activity
            async def triple(x):
                return x * 3
            def on_post(event):
                print(triple(2))          # from sync code: blocks, returns the value
            """
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["6"])

    # -- workflow timeout ---------------------------------------------------------------------

    def test_workflow_timeout(self):
        # A billion steps of workflow code (seconds on any machine, never 0.5 s; and no call
        # that would run as an activity and pause the clock): the limit, not the loop's end,
        # must end the session. An ordering, not a bound on this machine's speed.
        r = self.run_session(
            """
            def on_post(e):
                for _ in range(10**9):
                    pass
                print("ran to its end")
            """,
            workflow_timeout=0.5,
        )
        done = self.assertDoneError(r, "WorkflowTimeoutError", "activity")
        self.assertIn("handlers.py", done["traceback"])
        self.assertEqual(r.prints, [])

    def test_time_in_activities_and_async_waits_does_not_count(self):
        r = self.run_session(
            """
            import asyncio, time
            async def slow():
                await asyncio.sleep(1.3)
            def on_post(e):
                time.sleep(1.3)
                asyncio.run(slow())
                print("ok")
            """,
            # Each wait longer than the limit; the code around them (imports, an event loop) has a
            # second of room on a slow machine.
            workflow_timeout=1.0,
        )
        self.assertDoneOk(r)
        r = self.run_session(
            "import asyncio\nasync def on_post(e):\n    await asyncio.sleep(1.3)\n", workflow_timeout=1.0
        )
        self.assertDoneOk(r)

    def test_blocking_an_async_handler_times_out(self):
        r = self.run_session("async def on_post(e):\n    while True:\n        pass\n", workflow_timeout=0.5)
        self.assertDoneError(r, "WorkflowTimeoutError")

    # -- events -------------------------------------------------------------------------------

    def test_subscribe_next_event_unsubscribe(self):
        service = FakeService(events=[make_event(body=b"second")])
        r = self.run_session(
            """
            from datetime import timedelta
            import workflow_sdk
            def on_post(event):
                sid = workflow_sdk.subscribe("t", 'data.url.path.endsWith("/a")')
                e = workflow_sdk.next_event(sid, timeout=timedelta(seconds=5))
                print(e.body.text, e["body"]["text"], e.data.body.text, e.data.body.bytes)
                print(workflow_sdk.next_event([sid], timeout=0))
                workflow_sdk.unsubscribe(sid)
                try:
                    workflow_sdk.subscribe("nope")
                except ValueError as err:
                    print("ValueError", err)
            """,
            service=service,
        )
        self.assertDoneOk(r)
        self.assertEqual(
            r.prints, ["second second second b'second'", "None", "ValueError unknown source 'nope'"]
        )
        sub, ev1, ev2, unsub, sub2 = [m for m in r.messages if "req" in m]
        self.assertEqual(
            (sub["type"], sub["name"], sub["filter"]), ("subscribe", "t", 'data.url.path.endsWith("/a")')
        )
        self.assertEqual((ev1["ids"], ev1["timeout"]), (["sub_1"], 5.0))
        self.assertEqual(ev2["timeout"], 0.0)
        self.assertEqual(unsub["id"], "sub_1")
        self.assertEqual(len({m["req"] for m in (sub, ev1, ev2, unsub, sub2)}), 5)

    def test_event_functions_inside_activity_raise(self):
        r = self.run_session(
            """
            import workflow_sdk
            @workflow_sdk.activity
            def act():
                try:
                    workflow_sdk.subscribe("t")
                except RuntimeError as e:
                    return str(e)
            def on_post(event):
                print(act())
            """
        )
        self.assertDoneOk(r)
        self.assertIn("inside an activity", r.prints[0])
        self.assertEqual(r.of("subscribe"), [])

    # -- protocol -----------------------------------------------------------------------------

    def test_bad_message_from_service_ends_session(self):
        def bad(msg, sock):
            if msg["type"] == "subscribe":
                sock.sendall(b'{"type":"bogus"}\n')
                return True
            return False

        r = self.run_session(
            "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.subscribe('t')\n", on_message=bad
        )
        self.assertDoneError(r, "ProtocolError", "bogus")

    def test_stop_ends_session(self):
        def stop(msg, sock):
            if msg["type"] == "print":
                sock.sendall(b'{"type":"stop"}\n')
            return False

        # Asleep for 10 s after the print (within the harness's 20 s read timeout): a stop that
        # did not end the process would let it print "woke" and send done.
        r = self.run_session(
            "import time\ndef on_post(e):\n    print('x')\n    time.sleep(10)\n    print('woke')\n",
            on_message=stop,
        )
        self.assertIsNone(r.done)
        self.assertEqual(r.prints, ["x"])

    def test_reply_error_types(self):
        class Failing(FakeService):
            def answer(self, msg):
                return {"ok": False, "error": "TimeoutError", "message": "too slow"}

        r = self.run_session(
            "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.subscribe('t')\n", service=Failing()
        )
        self.assertDoneError(r, "TimeoutError: too slow")


class DurableTest(unittest.TestCase):
    HANDLER = """
        import random, workflow_sdk
        print("before")
        @workflow_sdk.activity
        def bump(path):
            with open(path, "a") as f:
                f.write("x")
            return "bumped"
        def on_post(event):
            print("start")
            n = random.random()
            b = bump(event.data.body.text)
            sid = workflow_sdk.subscribe("t")
            e = workflow_sdk.next_event(sid)
            workflow_sdk.http_outcome(200, "ok")
            try:
                bump("/nonexistent/dir/file")
            except OSError as err:
                print("err", type(err).__name__)
            print("end", n, b, e.body.text if e else None)
        """

    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        fd, self.counter = tempfile.mkstemp()
        os.close(fd)
        self.event = make_event(body=self.counter.encode())

    def tearDown(self):
        os.unlink(self.counter)

    def bumps(self):
        with open(self.counter) as f:
            return len(f.read())

    def live(self):
        service = FakeService(events=[make_event(body=b"next")])
        r = self.server.run({"handlers.py": self.HANDLER}, durable=True, event=self.event, service=service)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        return r

    def journal_of(self, r):
        """The journal the service would keep: activity steps from the child, the rest from requests."""
        journal = []
        for m in r.messages:
            if m["type"] == "step":
                journal.append({k: v for k, v in m.items() if k != "type"})
            elif m["type"] == "subscribe":
                journal.append(
                    {"seq": len(journal), "kind": "subscribe", "name": "t", "filter": "", "value": "sub_1"}
                )
            elif m["type"] == "next_event":
                journal.append({"seq": len(journal), "kind": "next_event", "value": make_event(body=b"next")})
            elif m["type"] == "outcome":
                journal.append({"seq": len(journal), "kind": "outcome"})
        return journal

    def test_live_durable_session_sends_steps(self):
        r = self.live()
        steps = r.of("step")
        self.assertEqual(
            [(s["seq"], s["function"]) for s in steps],
            [(0, "random.Random.random"), (1, "handlers.bump"), (5, "handlers.bump")],
        )
        self.assertEqual(pickle.loads(base64.b64decode(steps[1]["result"])), "bumped")
        self.assertIsInstance(pickle.loads(base64.b64decode(steps[2]["error"])), OSError)
        self.assertEqual(self.bumps(), 1)
        self.assertEqual(len(r.of("activity")), 3)
        # Numbered; each ended within 50 ms, so none was told as running (no row in flight).
        self.assertEqual([m["id"] for m in r.of("activity")], [1, 2, 3])
        self.assertEqual(r.of("activity_started"), [])

    def test_replay_returns_recorded_values_without_running(self):
        first = self.live()
        journal = self.journal_of(first)
        self.assertEqual(len(journal), 6)
        r = self.server.run({"handlers.py": self.HANDLER}, durable=True, event=self.event, journal=journal)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(self.bumps(), 1)  # bump did not run again
        self.assertEqual([m["type"] for m in r.messages], ["print", "print", "done"])  # nothing resent
        # Prints before the last journaled step are suppressed; those after it run live again.
        self.assertEqual(r.prints, first.prints[-2:])  # and the same random number
        self.assertEqual(r.prints[0], "err FileNotFoundError")
        self.assertTrue(r.prints[1].startswith("end ") and r.prints[1].endswith(" bumped next"))

    def test_partial_replay_runs_on_live(self):
        journal = self.journal_of(self.live())[:2]
        service = FakeService(events=[make_event(body=b"live")])
        r = self.server.run(
            {"handlers.py": self.HANDLER}, durable=True, event=self.event, journal=journal, service=service
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(self.bumps(), 1)
        self.assertEqual([s["seq"] for s in r.of("step")], [5])
        self.assertEqual(r.prints, ["err FileNotFoundError", r.prints[-1]])
        self.assertTrue(r.prints[-1].endswith(" bumped live"))

    def test_a_replay_sends_each_step_for_the_service_to_judge(self):
        # The service is the one judge of a replay (src/sessions/journal.ts words the error): the
        # runner sends what the handler calls now, numbered, and decides nothing itself.
        journal = self.journal_of(self.live())
        journal[1]["function"] = "handlers.other"
        r = self.server.run({"handlers.py": self.HANDLER}, durable=True, event=self.event, journal=journal)
        asked = [m for m in r.replayed if m["type"] == "replay_activity"]
        self.assertEqual([asked[1]["seq"], asked[1]["function"]], [1, "handlers.bump"])
        self.assertEqual([m["seq"] for m in r.replayed], list(range(len(journal))))

    def test_a_short_or_other_replay_is_the_services_to_fail(self):
        journal = [{"seq": 0, "kind": "subscribe", "name": "t", "filter": "", "value": "sub_1"}]
        r = self.server.run(
            {"handlers.py": "import time\ndef on_post(e):\n    time.sleep(0)\n"},
            durable=True,
            journal=journal,
        )
        self.assertEqual([(m["type"], m["seq"]) for m in r.replayed], [("sleep", 0)])
        r = self.server.run({"handlers.py": "def on_post(e):\n    pass\n"}, durable=True, journal=journal)
        self.assertTrue(r.done["ok"])  # the service fails it: the run stopped short of its journal

    def test_failed_request_step_replays_its_error(self):
        handler = (
            "import workflow_sdk\ndef on_post(e):\n    try:\n        workflow_sdk.subscribe('nope')\n"
            "    except ValueError as err:\n        print('again', err)\n"
        )
        journal = [
            {
                "seq": 0,
                "kind": "subscribe",
                "name": "nope",
                "filter": "",
                "error": "ValueError",
                "message": "unknown source 'nope'",
            }
        ]
        r = self.server.run({"handlers.py": handler}, durable=True, journal=journal)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(r.prints, ["again unknown source 'nope'"])
        self.assertEqual(r.of("subscribe"), [])

    def test_malformed_journal(self):
        r = self.server.run(
            {"handlers.py": "def on_post(e):\n    pass\n"}, durable=True, journal=[{"seq": 3, "kind": "x"}]
        )
        self.assertIn("ProtocolError", r.done["error"])


if __name__ == "__main__":
    unittest.main()


class DurableSleepTest(unittest.TestCase):
    """time.sleep in a durable session's workflow code is a timer the service keeps."""

    HANDLER = "import time\ndef on_post(event):\n    time.sleep(0.01)\n    print('after')\n"

    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_live_sleep_is_a_request_with_its_step_number(self):
        r = self.server.run({"handlers.py": self.HANDLER}, durable=True)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        sleeps = [m for m in r.messages if m["type"] == "sleep"]
        self.assertEqual([(m["seq"], m["seconds"]) for m in sleeps], [(0, 0.01)])
        self.assertEqual(r.of("activity"), [])  # not an activity any more

    def test_replayed_sleep_returns_at_once(self):
        r = self.server.run(
            {"handlers.py": self.HANDLER}, durable=True, journal=[{"seq": 0, "kind": "sleep"}]
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual([m["type"] for m in r.messages], ["print", "done"])

    def test_non_durable_sleep_stays_an_activity(self):
        r = self.server.run({"handlers.py": self.HANDLER})
        self.assertEqual([m["function"] for m in r.of("activity")], ["time.sleep"])
