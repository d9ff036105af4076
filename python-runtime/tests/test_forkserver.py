"""The fork server's life: ready line, fresh state per session, reaping, dying with the service."""

import json
import os
import signal
import time
import unittest

from .harness import ForkServer, write_project

BLOCKING = "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.next_event(workflow_sdk.subscribe('t'))\n"


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone, even while we read
        return False


def wait_until(condition, seconds=60):
    """Polls `condition` until it holds; False past `seconds` (a deadline to stop waiting only,
    long enough for a slow, busy machine to reap a process)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def wait_gone(pid, seconds=60):
    return wait_until(lambda: not alive(pid), seconds)


def niceness(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def children_of(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return f.read().split()


class ForkServerTest(unittest.TestCase):
    def setUp(self):
        self.server = ForkServer()

    def tearDown(self):
        self.server.close()

    def start_blocked_session(self):
        """A session waiting in next_event (the test never answers): returns (sock, child pid)."""
        sock, reader, hello = self.server.open(write_project({"handlers.py": BLOCKING}, self))
        self.assertEqual(json.loads(reader.readline())["type"], "subscribe")
        self.addCleanup(sock.close)
        self.addCleanup(reader.close)
        return (sock, reader), hello["pid"]

    def test_ready_line(self):
        ready = self.server.ready
        self.assertEqual(ready["type"], "ready")
        self.assertEqual(ready["pid"], self.server.proc.pid)
        self.assertEqual(ready["sdk"], "0.1.0")
        self.assertRegex(ready["python"], r"^3\.\d+\.\d+")

    def test_back_to_back_sessions_share_no_state_and_leave_no_zombies(self):
        handler = """
            import os, sys, helper
            seen = []
            def on_post(event):
                seen.append(1)
                os.environ.setdefault("LEAK", "set by the first session")
                print(len(seen), helper.VALUE, os.environ.get("LEAK"), os.environ.get("ONLY_FIRST"))
            """
        first = self.server.run(
            {"handlers.py": handler, "helper.py": "VALUE = 'one'\n"}, env={"ONLY_FIRST": "1"}
        )
        second = self.server.run({"handlers.py": handler, "helper.py": "VALUE = 'two'\n"})
        self.assertEqual(first.prints, ["1 one set by the first session 1"])
        self.assertEqual(second.prints, ["1 two set by the first session None"])
        self.assertNotEqual(first.pid, second.pid)
        self.assertTrue(wait_gone(first.pid) and wait_gone(second.pid))
        # Only the spares are left, each alive and waiting; the sessions' children were reaped:
        # waited for, not a set time slept.
        server = self.server.proc.pid
        wait_until(lambda: len(children_of(server)) == 2 and str(first.pid) not in children_of(server))
        spares = children_of(server)
        self.assertEqual(len(spares), 2)
        self.assertNotIn(str(first.pid), spares)
        self.assertTrue(all(alive(int(pid)) for pid in spares))

    def test_sessions_and_the_server_run_at_nice_5_by_default(self):
        _, child = self.start_blocked_session()
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        for pid in (self.server.proc.pid, child):
            self.assertEqual(niceness(pid), max(ours, 5))
            self.assertEqual(os.sched_getscheduler(pid), os.SCHED_OTHER)

    def test_a_server_started_at_nice_5_keeps_its_sessions_there(self):
        # The session host runs 5 below the front door's thread and starts its fork servers: `low`
        # is nice 5 in all, not 5 more than the host's.
        self.server.close()
        self.server = ForkServer(nice=5)
        _, child = self.start_blocked_session()
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        for pid in (self.server.proc.pid, child):
            self.assertEqual(niceness(pid), max(ours + 5, 5))

    def test_priority_idle_puts_sessions_and_their_threads_at_sched_idle_and_the_server_at_19(self):
        self.server.close()
        self.server = ForkServer(args=["--priority", "idle"])
        _, child = self.start_blocked_session()
        self.assertEqual(niceness(self.server.proc.pid), 19)
        self.assertEqual(os.sched_getscheduler(self.server.proc.pid), os.SCHED_OTHER)
        tids = os.listdir(f"/proc/{child}/task")
        self.assertGreater(len(tids), 1)  # its threads, started after the policy, inherit it
        for tid in tids:
            self.assertEqual(os.sched_getscheduler(int(tid)), os.SCHED_IDLE)

    def test_priority_normal_leaves_the_service_priority(self):
        self.server.close()
        self.server = ForkServer(args=["--priority", "normal"])
        _, child = self.start_blocked_session()
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        for pid in (self.server.proc.pid, child):
            self.assertEqual(niceness(pid), ours)
            self.assertEqual(os.sched_getscheduler(pid), os.SCHED_OTHER)

    def test_closing_stdin_kills_children_and_removes_socket(self):
        _, child = self.start_blocked_session()
        self.assertTrue(alive(child))
        self.server.proc.stdin.close()
        self.assertEqual(self.server.proc.wait(5), 0)
        self.assertTrue(wait_gone(child))
        self.assertFalse(os.path.exists(self.server.socket_path))

    def test_sigterm_kills_children(self):
        _, child = self.start_blocked_session()
        self.server.proc.send_signal(signal.SIGTERM)
        self.server.proc.wait(5)
        self.assertTrue(wait_gone(child))

    def test_sigkill_of_the_server_kills_children(self):
        _, child = self.start_blocked_session()
        self.server.proc.kill()
        self.server.proc.wait(5)
        self.assertTrue(wait_gone(child))

    def test_service_hanging_up_ends_the_child(self):
        (sock, reader), child = self.start_blocked_session()
        reader.close()
        sock.close()
        self.assertTrue(wait_gone(child))


if __name__ == "__main__":
    unittest.main()


class ExitReportTest(unittest.TestCase):
    """The server tells the service how each child ended, one JSON line on stdout per child."""

    def setUp(self):
        self.server = ForkServer(args=["--files", "64"])

    def tearDown(self):
        self.server.close()

    def exit_of(self, pid):
        while True:
            line = json.loads(self.server.proc.stdout.readline())
            if line.get("pid") == pid:
                return line

    def test_exit_code_and_signal_are_reported(self):
        sock, reader, hello = self.server.open(
            write_project({"handlers.py": "import os\ndef on_post(e):\n    os._exit(3)\n"}, self)
        )
        self.addCleanup(sock.close)
        self.addCleanup(reader.close)
        self.assertEqual(self.exit_of(hello["pid"]), {"type": "exit", "pid": hello["pid"], "code": 3})
        sock2, reader2, hello2 = self.server.open(write_project({"handlers.py": BLOCKING}, self))
        self.addCleanup(sock2.close)
        self.addCleanup(reader2.close)
        os.kill(hello2["pid"], signal.SIGSEGV)
        self.assertEqual(
            self.exit_of(hello2["pid"]), {"type": "exit", "pid": hello2["pid"], "signal": signal.SIGSEGV}
        )
        self.assertTrue(wait_gone(hello2["pid"]))

    def test_open_files_limit_is_named(self):
        handler = "import os\ndef on_post(e):\n    kept = [open(os.devnull) for _ in range(1000)]\n"
        result = self.server.run({"handlers.py": handler})
        done = result.messages[-1]
        self.assertEqual(done["type"], "done")
        self.assertIn("open files limit of 64", done["error"])
