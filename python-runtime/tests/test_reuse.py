"""A reused process (runner/reuse.py): sessions one after the other over one connection."""

import json
import os
import signal
import unittest

from .harness import FakeService, ForkServer, make_event, write_project
from .test_forkserver import wait_gone

HANDLERS = """
    import os, subprocess, sys, threading, time
    import workflow_sdk

    print("imported")
    STATE = {"n": 0}

    def count(e):
        STATE["n"] += 1
        print(f"n={STATE['n']} pid={os.getpid()} sid={e.session_id}")
        os.write(1, b"raw " + e.data.body.text.encode() + b"\\n")
        os.write(2, b"no newline " + e.data.body.text.encode())
        workflow_sdk.http_outcome(200, body=str(STATE["n"]))

    def env(e):
        print("X=" + os.environ.get("X", "-"), "V=" + os.environ.get("V", "-"))
        os.environ["X"] = "set by a session"
        os.environ["V"] = "changed"

    def fail(e):
        raise ValueError("no")

    def spin(e):
        while True:
            pass

    def thread(e):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()

    def child(e):
        print("child", subprocess.Popen(["sleep", "60"]).pid)

    def loop(e):
        print("looping")
        while True:
            time.sleep(0.05)

    def library(e):
        import random, string
        string.HL_SEEN = getattr(string, "HL_SEEN", 0) + 1  # a module outside the project
        print("library", string.HL_SEEN, "random", random.random())
        random.seed(7)
"""


class Process:
    """One connection to a forked process, as the service's pool holds it."""

    def __init__(self, server, project):
        self.sock = server.connect()
        self.reader = self.sock.makefile("rb")
        self.hello = json.loads(self.reader.readline())
        self.project = project
        self.service = FakeService()

    def close(self):
        self.reader.close()
        self.sock.close()

    def send(self, msg):
        self.sock.sendall((json.dumps(msg) + "\n").encode())

    def start(self, entry, body="b", reuse=True, **extra):
        sid = f"ses_{body}"
        self.send(
            {
                "type": "start",
                "session_id": sid,
                "project_dir": self.project,
                "entry": f"handlers.py:{entry}",
                "event": make_event(body.encode(), session_id=sid),
                "reuse": reuse,
                **extra,
            }
        )

    def next_of(self, kind):
        """The next message of type `kind`; others (a running loop's activities) are passed over."""
        for line in self.reader:
            msg = json.loads(line)
            if msg["type"] == kind:
                return msg
        raise AssertionError(f"the connection ended before a {kind!r} message")

    def rest(self):
        """Every message until the connection ends (what a session still running sent last)."""
        return [json.loads(line) for line in self.reader]

    def run(self, entry, body="b", reuse=True, **extra):
        """One session; its messages up to and with `done` (None when the connection ended)."""
        self.start(entry, body, reuse, **extra)
        messages = []
        for line in self.reader:
            msg = json.loads(line)
            messages.append(msg)
            if "req" in msg:
                self.send({"type": "reply", "req": msg["req"], **self.service.answer(msg)})
            elif msg["type"] == "step":
                self.send({"type": "ack", "seq": msg["seq"]})
            if msg["type"] == "done":
                return messages
        return messages


def prints(messages):
    return [(m["stream"], m["text"]) for m in messages if m["type"] == "print"]


def by_stream(lines):
    """stderr's lines, then stdout's, each in the order printed."""
    return sorted(lines, key=lambda line: line[0])


def done(messages):
    return next((m for m in messages if m["type"] == "done"), None)


class ReuseTest(unittest.TestCase):
    def setUp(self):
        self.project = write_project({"handlers.py": HANDLERS}, self)
        self.server = ForkServer()
        self.addCleanup(self.server.close)

    def process(self):
        p = Process(self.server, self.project)
        self.addCleanup(p.close)
        return p

    def test_module_state_stays_and_each_session_gets_its_own_prints(self):
        p = self.process()
        first = p.run("count", "one")
        second = p.run("count", "two")
        pid = p.hello["pid"]
        self.assertEqual(done(first), {"type": "done", "ok": True, "reuse": True})
        # In order within each stream (the two pipes are read apart, so not across them).
        self.assertEqual(
            by_stream(prints(first)),
            [
                ("stderr", "no newline one"),
                ("stdout", "imported"),
                ("stdout", f"n=1 pid={pid} sid=ses_one"),
                ("stdout", "raw one"),
            ],
        )
        # Imported once: no import print, the counter goes on, fd output of this session only.
        self.assertEqual(
            by_stream(prints(second)),
            [("stderr", "no newline two"), ("stdout", f"n=2 pid={pid} sid=ses_two"), ("stdout", "raw two")],
        )
        self.assertEqual(done(second)["reuse"], True)

    def test_fresh_modules_import_the_project_anew_for_each_session(self):
        p = self.process()
        first = p.run("count", "one", fresh_modules=True)
        second = p.run("count", "two", fresh_modules=True)
        pid = p.hello["pid"]
        self.assertEqual(done(second), {"type": "done", "ok": True, "reuse": True})
        for messages, sid in ((first, "one"), (second, "two")):  # module-level code runs again: n=1
            self.assertEqual(
                by_stream(prints(messages)),
                [
                    ("stderr", f"no newline {sid}"),
                    ("stdout", "imported"),
                    ("stdout", f"n=1 pid={pid} sid=ses_{sid}"),
                    ("stdout", f"raw {sid}"),
                ],
            )

    def test_fresh_modules_keep_libraries_and_seed_random_anew(self):
        p = self.process()
        seen = [p.run("library", str(i), fresh_modules=True) for i in range(2)]
        lines = [[text for _, text in prints(m) if text.startswith("library")][0].split() for m in seen]
        self.assertEqual([line[1] for line in lines], ["1", "2"])  # string's state is the process's
        import random

        after_seed = random.Random(7).random()
        self.assertNotEqual(float(lines[1][3]), after_seed)  # session 1's seed(7) does not reach 2

    def test_a_slow_import_anew_ends_the_process_and_says_so(self):
        busy = "import time\nuntil = time.thread_time() + 0.05\nwhile time.thread_time() < until:\n    pass\n"
        slow = write_project({"handlers.py": busy + "def on(e):\n    pass\n"}, self)
        p = Process(self.server, slow)
        self.addCleanup(p.close)
        first = p.run("on", "one", fresh_modules=True)  # imported for the first time: as any process
        second = p.run("on", "two", fresh_modules=True)  # anew: 50 ms of CPU, over SLOW_IMPORT
        self.assertEqual(done(first), {"type": "done", "ok": True, "reuse": True})
        self.assertEqual(done(second), {"type": "done", "ok": True, "slow_import": True})
        self.assertEqual(p.reader.readline(), b"")  # the process exits

    def test_the_last_session_of_a_process_ends_it(self):
        p = self.process()
        p.run("count", "one")
        last = p.run("count", "two", reuse=False)
        self.assertEqual(done(last), {"type": "done", "ok": True})
        self.assertEqual(p.reader.readline(), b"")  # the process exits
        wait_gone(p.hello["pid"])

    def test_each_session_starts_with_the_deployments_environment(self):
        p = self.process()
        first = p.run("env", "one", env={"V": "var"})
        second = p.run("env", "two", env={"V": "var"})
        self.assertEqual(prints(first), [("stdout", "imported"), ("stdout", "X=- V=var")])
        self.assertEqual(prints(second), [("stdout", "X=- V=var")])

    def test_what_ends_a_reused_process(self):
        cases = {
            "fail": "ValueError: no",
            "thread": None,
            "child": None,
        }
        for entry, error in cases.items():
            with self.subTest(entry):
                p = self.process()
                p.run("count", "one")
                messages = p.run(entry, "two")
                end = done(messages)
                self.assertEqual(end.get("reuse"), None, end)
                if error:
                    self.assertEqual(end["error"], error)
                self.assertEqual(p.reader.readline(), b"")
                self.assertTrue(wait_gone(p.hello["pid"]))
                if entry == "child":  # what the session left is killed and reaped with it
                    child = next(int(t.split()[1]) for _, t in prints(messages) if t.startswith("child "))
                    self.assertTrue(wait_gone(child))

    def test_a_timeout_in_a_later_session_ends_the_process(self):
        p = self.process()
        p.run("count", "one", workflow_timeout=0.5)
        end = done(p.run("spin", "two", workflow_timeout=0.5))
        self.assertFalse(end["ok"])
        self.assertIn("more than 0.5 s outside an activity", end["error"])
        self.assertEqual(p.reader.readline(), b"")

    def test_stop_in_a_later_session_ends_the_process(self):
        p = self.process()
        p.run("count", "one")
        p.start("loop", "two")
        self.assertEqual(p.next_of("print")["text"], "looping")
        p.send({"type": "stop"})
        # The loop's last activities may come first: then the connection ends, with no `done`.
        self.assertEqual([m["type"] for m in p.rest() if m["type"] != "activity"], [])
        wait_gone(p.hello["pid"])

    def test_a_second_start_while_a_session_runs_is_refused(self):
        p = self.process()
        p.run("count", "one")
        p.start("loop", "two")
        self.assertEqual(p.next_of("print")["text"], "looping")
        p.start("loop", "three")
        # The running loop's activities may come before the refusal, however slow the machine.
        end = p.next_of("done")
        self.assertIn("a start message while a session runs", end["error"])

    def test_an_idle_process_exits_when_the_service_hangs_up(self):
        p = self.process()
        p.run("count", "one")
        p.close()
        wait_gone(p.hello["pid"])

    def test_a_durable_start_is_not_reused(self):
        p = self.process()
        end = done(p.run("count", "one", durable=True))
        self.assertEqual(end, {"type": "done", "ok": True})
        self.assertEqual(p.reader.readline(), b"")


def may_raise_limits():
    """CAP_SYS_RESOURCE (bit 24): a hard rlimit may be raised (root in a container may lack it)."""
    with open("/proc/self/status") as f:
        caps = next(line for line in f if line.startswith("CapEff:"))
    return bool(int(caps.split()[1], 16) & (1 << 24))


class ReuseLimitsTest(unittest.TestCase):
    def test_each_session_gets_its_own_cpu_seconds_or_a_fresh_process(self):
        project = write_project(
            {
                "handlers.py": """
                    import time
                    def burn(e):
                        end = time.process_time() + 0.7
                        while time.process_time() < end:
                            pass
                """
            },
            self,
        )
        server = ForkServer(args=["--cpu-seconds", "1"])
        self.addCleanup(server.close)
        p = Process(server, project)
        self.addCleanup(p.close)
        if not may_raise_limits():
            # The limit cannot be renewed: the session completes and its process ends.
            self.assertEqual(done(p.run("burn", "one", workflow_timeout=30)), {"type": "done", "ok": True})
            self.assertEqual(p.reader.readline(), b"")
            return
        # 0.7 s each: the second and third would pass one second of the process's CPU.
        for body in ("one", "two", "three"):
            end = done(p.run("burn", body, workflow_timeout=30))
            self.assertEqual(end, {"type": "done", "ok": True, "reuse": True})
        os.kill(p.hello["pid"], signal.SIGKILL)
