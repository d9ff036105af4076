"""Deployment-warm fork servers: the project imported once, sessions forked after it, retiring."""

import json
import os
import time
import unittest

from .harness import ForkServer, make_event, write_project
from .test_forkserver import alive, children_of, wait_gone, wait_until

HANDLERS = """
    import os, json
    print("imported with", os.environ["COLOR"])
    STATE = {"n": 0}

    def on_post(e):
        STATE["n"] += 1
        # json.dumps is pure, os.getppid is not: the rewritten call runs as an activity.
        print(json.dumps({"n": STATE["n"], "ppid": os.getppid()}))
"""


class WarmServerTest(unittest.TestCase):
    def start(self, files, modules="handlers"):
        project = write_project(files, self)
        server = ForkServer(args=["--warm-dir", project, "--warm-modules", modules], env={"COLOR": "red"})
        self.addCleanup(server.close)
        return server, project

    def test_sessions_fork_from_the_imported_project_with_fresh_state(self):
        server, project = self.start({"handlers.py": HANDLERS})
        self.assertEqual(server.ready["type"], "ready")
        for _ in range(3):
            result = server.run({}, project_dir=project, keep_project=True, env={"COLOR": "red"})
            self.assertEqual(result.done["ok"], True, result.messages)
            printed = result.prints
            # The import's print is replayed as the session's own; module state starts fresh.
            self.assertEqual(printed[0], "imported with red")
            self.assertEqual(json.loads(printed[1]), {"n": 1, "ppid": server.proc.pid})
            self.assertEqual([m["function"] for m in result.of("activity")], ["posix.getppid"])

    def test_a_start_for_another_project_imports_that_project(self):
        # The child takes the warm modules over before `start` arrives (ahead.py); a `start` for
        # another folder gets that folder's modules, imported as usual, and none of the warm
        # import's prints.
        server, _ = self.start({"handlers.py": HANDLERS})
        other = write_project({"other.py": "def on_post(e):\n    print('other project')\n"}, self)
        result = server.run({}, project_dir=other, keep_project=True, entry="other.py:on_post", env={})
        self.assertEqual(result.done["ok"], True, result.messages)
        self.assertEqual(result.prints, ["other project"])

    def test_an_import_that_fails_stops_the_server_before_ready(self):
        project = write_project({"handlers.py": "raise RuntimeError('no')\n"}, self)
        with self.assertRaises(json.JSONDecodeError):
            ForkServer(args=["--warm-dir", project, "--warm-modules", "handlers"])

    def test_retire_drops_spares_and_waits_for_running_sessions(self):
        blocking = (
            "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.next_event(workflow_sdk.subscribe('t'))\n"
        )
        server, project = self.start({"handlers.py": blocking})
        sock, reader, hello = server.open(project)
        self.assertEqual(json.loads(reader.readline())["type"], "subscribe")
        # The session's child and 2 spares, forked however slowly this machine forks.
        self.assertTrue(wait_until(lambda: len(children_of(server.proc.pid)) >= 3))
        spares = [int(p) for p in children_of(server.proc.pid) if int(p) != hello["pid"]]
        server.proc.stdin.write(b"retire\n")
        server.proc.stdin.flush()
        for pid in spares:
            self.assertTrue(wait_gone(pid), f"spare {pid} outlived retire")
        self.assertFalse(os.path.exists(server.socket_path))
        self.assertIsNone(server.proc.poll(), "a retiring server waits for its running session")
        sock.close()
        reader.close()
        self.assertEqual(server.proc.wait(10), 0)

    def test_retire_never_kills_a_spare_that_took_a_session(self):
        # A spare has accepted a session's connection but not yet told its server (a busy
        # machine stretches that moment; tests.slow_notify makes it a second) when `retire`
        # arrives: the session runs on, and the server exits once it has ended.
        blocking = (
            "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.next_event(workflow_sdk.subscribe('t'))\n"
        )
        project = write_project({"handlers.py": blocking}, self)
        args = ["--warm-dir", project, "--warm-modules", "handlers"]
        server = ForkServer(args=args, env={"COLOR": "red"}, runner="tests.slow_notify")
        self.addCleanup(server.close)
        self.assertTrue(wait_until(lambda: len(children_of(server.proc.pid)) >= 2))
        spares = [int(p) for p in children_of(server.proc.pid)]
        sock = server.connect()
        reader = sock.makefile("rb")
        self.addCleanup(sock.close)
        self.addCleanup(reader.close)
        time.sleep(0.2)  # a spare accepts (had it not yet, it takes the connection after retire)
        server.proc.stdin.write(b"retire\n")
        server.proc.stdin.flush()
        line = reader.readline()
        self.assertTrue(line, "the connection was closed: retire killed the spare that took it")
        hello = json.loads(line)
        start = {
            "type": "start",
            "session_id": "ses_test",
            "project_dir": project,
            "entry": "handlers.py:on_post",
            "event": make_event(),
            "env": {},
            "durable": False,
            "journal": [],
            "workflow_timeout": 10,
        }
        sock.sendall((json.dumps(start) + "\n").encode())
        self.assertEqual(json.loads(reader.readline())["type"], "subscribe")
        for pid in spares:
            if pid != hello["pid"]:
                self.assertTrue(wait_gone(pid), f"spare {pid} outlived retire")
        self.assertTrue(alive(hello["pid"]))
        self.assertFalse(os.path.exists(server.socket_path))
        self.assertIsNone(server.proc.poll(), "a retiring server waits for its running session")
        sock.close()
        reader.close()
        self.assertEqual(server.proc.wait(10), 0)
