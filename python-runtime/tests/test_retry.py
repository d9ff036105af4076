"""Retry policies: `RetryPolicy` itself, and an activity's attempts in a real session process
(fork server and the fake service of harness.py): non-durable waits in the process, durable ones
are `retry` requests the service answers, a resumed session finishes the attempts left."""

import base64
import os
import pickle
import tempfile
import time
import unittest

from workflow_sdk import RetryPolicy

from .harness import ForkServer

FLAKY = """
import os
import sys
import workflow_sdk
from workflow_sdk import RetryPolicy

COUNT = os.path.join(os.environ["WORK"], "count")

def bump():
    n = int(open(COUNT).read()) + 1 if os.path.exists(COUNT) else 1
    open(COUNT, "w").write(str(n))
    return n

@workflow_sdk.activity(retry=RetryPolicy(max_attempts=4, initial_interval=0.05, backoff=2.0, max_interval=1))
def flaky():
    n = bump()
    if n < 3:
        raise ConnectionError(f"try {n} failed")
    return n

@workflow_sdk.activity(
    retry=RetryPolicy(max_attempts=4, initial_interval=0.01, non_retryable=["PermissionError"])
)
def denied():
    bump()
    raise PermissionError("no access")

@workflow_sdk.activity(retry=RetryPolicy(max_attempts=2, initial_interval=0.01))
def broken():
    bump()
    raise TimeoutError("always")

def on_flaky(event):
    print("got", flaky())

def on_denied(event):
    try:
        denied()
    except PermissionError as e:
        print("denied after", e.attempts)

def on_broken(event):
    try:
        broken()
    except TimeoutError as e:
        print("gave up after", e.attempts, e)

@workflow_sdk.activity(retry=RetryPolicy(max_attempts=2, initial_interval=0.4))
def slow_flaky():
    n = bump()
    if n < 2:
        raise ConnectionError(f"try {n} failed")
    return n


def on_slow(event):
    print("got", slow_flaky())


def on_default(event):
    sys.path.insert(0, os.environ["LIB"])
    import flakylib  # outside the project: its functions are activities

    print("got", flakylib.flaky(COUNT))
"""

# A library outside the project (on the session's path), as a provider's client would be.
FLAKYLIB = """
import os

def flaky(count):
    n = int(open(count).read()) + 1 if os.path.exists(count) else 1
    open(count, "w").write(str(n))
    if n < 3:
        raise ConnectionError(f"try {n} failed")
    return n
"""


class PolicyTest(unittest.TestCase):
    def test_waits_grow_by_backoff_up_to_the_cap(self):
        p = RetryPolicy(max_attempts=6, initial_interval=1, backoff=3, max_interval=10)
        self.assertEqual([p.delay(n) for n in range(1, 5)], [1.0, 3.0, 9.0, 10.0])
        self.assertEqual(p.wait_after(5, ValueError()), 10.0)
        self.assertIsNone(p.wait_after(6, ValueError()))  # the sixth was the last

    def test_which_errors_are_tried_again(self):
        p = RetryPolicy(non_retryable=(PermissionError, "KeyError", "builtins.LookupError"))
        self.assertTrue(p.retries(ConnectionError()))
        self.assertFalse(p.retries(PermissionError()))
        self.assertFalse(p.retries(IndexError()))  # a LookupError, by its qualified name
        self.assertFalse(p.retries(KeyboardInterrupt()))
        from workflow_sdk.errors import ActivityCallError

        self.assertFalse(p.retries(ActivityCallError("subscribe")))  # the SDK's own errors

    def test_bad_policies_say_what_is_wrong(self):
        cases = [
            ({"max_attempts": 0}, "max_attempts must be from 1"),
            ({"max_attempts": True}, "max_attempts must be a whole number"),
            ({"backoff": 0.5}, "backoff must be from 1"),
            ({"initial_interval": 10, "max_interval": 5}, "must not be below initial_interval"),
            ({"non_retryable": [42]}, "non_retryable takes exception classes"),
        ]
        for kwargs, text in cases:
            with self.assertRaises((TypeError, ValueError)) as ctx:
                RetryPolicy(**kwargs)
            self.assertIn(text, str(ctx.exception))

    def test_a_policy_travels_as_its_wire_form(self):
        p = RetryPolicy(max_attempts=5, non_retryable=(PermissionError,))
        self.assertEqual(RetryPolicy.from_wire(p.to_wire()), p)
        self.assertTrue(RetryPolicy.from_wire(p.to_wire()).wait_after(1, ConnectionError()) is not None)
        self.assertIsNone(RetryPolicy.from_wire(p.to_wire()).wait_after(1, PermissionError()))

    def test_the_decorator_checks_its_policy(self):
        import workflow_sdk

        with self.assertRaises(TypeError):
            workflow_sdk.activity(retry={"max_attempts": 3})


class RetrySessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="hl-retry-")
        self.lib = tempfile.mkdtemp(prefix="hl-retry-lib-")
        with open(os.path.join(self.lib, "flakylib.py"), "w") as f:
            f.write(FLAKYLIB)

    def count(self):
        with open(os.path.join(self.work, "count")) as f:
            return int(f.read())

    def run_entry(self, entry, **start):
        return self.server.run(
            {"handlers.py": FLAKY},
            entry=f"handlers.py:{entry}",
            env={"WORK": self.work, "LIB": self.lib},
            **start,
        )

    def attempts(self, r):
        return [(m["ok"], m.get("error"), m.get("retry")) for m in r.of("activity")]

    def test_a_flaky_activity_succeeds_on_its_third_attempt(self):
        t0 = time.monotonic()
        r = self.run_entry("on_flaky")
        self.assertTrue(r.done["ok"], r.messages)
        self.assertEqual(r.prints, ["got 3"])
        self.assertEqual(
            self.attempts(r),
            [
                (False, "ConnectionError: try 1 failed", {"attempt": 1, "of": 4, "next_in": 0.05}),
                (False, "ConnectionError: try 2 failed", {"attempt": 2, "of": 4, "next_in": 0.1}),
                (True, None, {"attempt": 3, "of": 4}),
            ],
        )
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)  # it waited, in the process
        self.assertEqual(r.of("retry"), [])  # non-durable: nothing asked of the service

    def test_a_non_retryable_error_is_raised_at_once(self):
        r = self.run_entry("on_denied")
        self.assertEqual(r.prints, ["denied after 1"])
        self.assertEqual(self.count(), 1)
        self.assertEqual(self.attempts(r), [(False, "PermissionError: no access", {"attempt": 1, "of": 4})])

    def test_the_last_attempts_error_reaches_the_workflow_with_attempts(self):
        r = self.run_entry("on_broken")
        self.assertEqual(r.prints, ["gave up after 2 always"])
        self.assertEqual(self.count(), 2)

    def test_the_triggers_policy_covers_outside_calls(self):
        policy = RetryPolicy(max_attempts=3, initial_interval=0.01).to_wire()
        r = self.run_entry("on_default", retry=policy)
        self.assertTrue(r.done["ok"], r.messages)
        self.assertEqual(r.prints, ["got 3"])
        calls = [m for m in r.of("activity") if m["function"] == "flakylib.flaky"]
        self.assertEqual([m["retry"]["attempt"] for m in calls], [1, 2, 3])
        # Without the trigger's policy the same call fails the session at once.
        os.remove(os.path.join(self.work, "count"))
        r = self.run_entry("on_default")
        self.assertFalse(r.done["ok"])
        self.assertEqual(r.done["error"], "ConnectionError: try 1 failed")

    def test_a_wait_in_the_process_is_not_workflow_time(self):
        # The wait (0.4 s) outlasts the workflow timeout (0.25 s): the clock stops while it waits.
        r = self.run_entry("on_slow", workflow_timeout=0.25)
        self.assertTrue(r.done["ok"], r.messages)
        self.assertEqual(r.prints, ["got 2"])

    def test_durable_attempts_are_requests_and_the_last_is_journaled(self):
        r = self.run_entry("on_flaky", durable=True)
        self.assertTrue(r.done["ok"], r.messages)
        retries = r.of("retry")
        self.assertEqual(
            [(m["seq"], m["attempt"], m["seconds"]) for m in retries], [(0, 1, 0.05), (0, 2, 0.1)]
        )
        error = pickle.loads(base64.b64decode(retries[0]["error"]))
        self.assertEqual(str(error), "try 1 failed")
        (step,) = r.of("step")
        self.assertEqual((step["seq"], step["attempts"]), (0, 3))
        self.assertEqual(pickle.loads(base64.b64decode(step["result"])), 3)
        self.assertEqual(len(step["args"]), 16)

    def test_a_resumed_session_finishes_the_attempts_left(self):
        # The process went while attempt 2 waited: the journal has the step pending.
        with open(os.path.join(self.work, "count"), "w") as f:
            f.write("2")
        error = base64.b64encode(pickle.dumps(ConnectionError("try 2 failed"))).decode()
        pending = {"seq": 0, "kind": "activity", "function": "handlers.flaky", "error": error}
        pending.update(attempts=2, retry_at=int(time.time() * 1000))
        r = self.run_entry("on_flaky", durable=True, journal=[pending])
        self.assertTrue(r.done["ok"], r.messages)
        self.assertEqual(r.prints, ["got 3"])
        self.assertEqual(self.count(), 3)  # one attempt more, not three
        asked = [(m["type"], m.get("attempt"), m.get("seconds")) for m in r.replayed]
        self.assertEqual(asked, [("replay_activity", None, None), ("retry", 2, 0)])
        (step,) = r.of("step")
        self.assertEqual(step["attempts"], 3)

    def test_a_replayed_failure_keeps_its_attempts(self):
        error = base64.b64encode(pickle.dumps(TimeoutError("always"))).decode()
        journal = [
            {"seq": 0, "kind": "activity", "function": "handlers.broken", "error": error, "attempts": 2}
        ]
        r = self.run_entry("on_broken", durable=True, journal=journal)
        self.assertEqual(r.prints, ["gave up after 2 always"])
        self.assertFalse(os.path.exists(os.path.join(self.work, "count")))  # nothing ran


if __name__ == "__main__":
    unittest.main()


class KitTest(unittest.TestCase):
    """`workflow_sdk.testing` runs the attempts too, at once (no waits): each is an ActivityCall."""

    def test_attempts_under_the_kit(self):
        import workflow_sdk
        from workflow_sdk.testing import run

        tries = []

        @workflow_sdk.activity(retry=RetryPolicy(max_attempts=5, initial_interval=30))
        def flaky():
            tries.append(1)
            if len(tries) < 3:
                raise ConnectionError("not yet")
            return len(tries)

        t0 = time.monotonic()
        result = run(lambda event: print("got", flaky()))
        self.assertLess(time.monotonic() - t0, 30)  # the 30 s waits were not waited
        self.assertEqual(result.prints, ["got 3"])
        self.assertEqual([c.ok for c in result.activities], [False, False, True])

    def test_the_sessions_policy_under_the_kit(self):
        import workflow_sdk
        from workflow_sdk.testing import Session

        @workflow_sdk.activity  # no policy of its own: the trigger's (the Session's `retry=`)
        def missing():
            return os.stat("/nonexistent-for-the-kit")

        def handler(event):
            try:
                missing()
            except FileNotFoundError as e:
                print("attempts", e.attempts)

        with Session(retry=RetryPolicy(max_attempts=2, initial_interval=0)) as s:
            s.run(handler)
        self.assertEqual(s.result.prints, ["attempts 2"])
        self.assertEqual(len(s.result.activities), 2)
