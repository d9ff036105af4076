"""HOOKLINE_FAULT_PHASES: a session's minor faults phase by phase, for the bench (runner/faults.py)."""

import json
import os
import tempfile
import unittest

from .harness import ForkServer
from .test_forkserver import wait_until

HANDLER = {"handlers.py": "import workflow_sdk\ndef on_post(e):\n    workflow_sdk.http_outcome(200)\n"}
PHASES = ["forked", "spare", "start", "done"]


def lines(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f]
    except FileNotFoundError:
        return []


class FaultPhases(unittest.TestCase):
    def test_each_session_counts_its_phases_and_the_server_its_exit(self):
        path = os.path.join(tempfile.mkdtemp(prefix="hl-faults-"), "phases.ndjson")
        server = ForkServer(env={"HOOKLINE_FAULT_PHASES": path})
        self.addCleanup(server.close)
        pids = [server.run(HANDLER).pid for _ in range(2)]
        self.assertTrue(wait_until(lambda: {m["pid"] for m in lines(path) if "exit" in m} >= set(pids)))
        for pid in pids:
            mine = [m for m in lines(path) if m["pid"] == pid]
            marks = next(m for m in mine if "done" in m)
            counts = [marks[p] for p in PHASES] + [next(m for m in mine if "exit" in m)["exit"]]
            self.assertEqual(counts, sorted(counts), (pid, marks))  # each phase counts from the fork
            self.assertGreater(counts[0], 0)


if __name__ == "__main__":
    unittest.main()
