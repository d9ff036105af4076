"""Activity overhead: a trivial activity versus the same call made directly.

The figures are printed for a reader; what is asserted is that each call took the path it should
(an activity report per `os.getpid()`, none for `len`). Speed is measured by `npm run bench`, not
bounded here: a shared, busy machine made any bound either loose enough to mean nothing or flaky.
"""

import unittest

from .harness import ForkServer

HANDLER = """
import os, time, workflow_sdk
N = 2000
def on_post(event):
    t = time.perf_counter
    start = t()
    for _ in range(N):
        os.getpid()               # an activity (posix.getpid)
    activity = (t() - start) / N
    start = t()
    for _ in range(N):
        len("x")                  # a rewritten call that runs directly
    direct = (t() - start) / N
    print(f"{activity * 1e6:.1f} {direct * 1e6:.2f}")
"""


class PerfTest(unittest.TestCase):
    def test_activity_overhead(self):
        server = ForkServer()
        try:
            r = server.run({"handlers.py": HANDLER})
        finally:
            server.close()
        self.assertTrue(r.done["ok"], r.messages)
        activity_us, direct_us = map(float, r.prints[0].split())
        print(
            f"\nactivity overhead: {activity_us:.1f} us per call; rewritten direct call: {direct_us:.2f} us"
        )
        reports = [m for m in r.messages if m["type"] == "activity"]
        # 2000 getpid calls, and the 4 reads of the clock (time.perf_counter is one too).
        self.assertEqual([m["function"] for m in reports].count("posix.getpid"), 2000)
        self.assertEqual({m["function"] for m in reports}, {"posix.getpid", "time.perf_counter"})
        self.assertTrue(all(m["ok"] for m in reports))


if __name__ == "__main__":
    unittest.main()
