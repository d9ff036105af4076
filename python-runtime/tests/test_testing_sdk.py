"""workflow_sdk.testing serves the service's SDK requests: store, start, signals, outcome, URLs."""

import unittest

import autokitteh
import workflow_sdk as sdk
from workflow_sdk import testing
from workflow_sdk.errors import AutoKittehError


class StoreTest(unittest.TestCase):
    def test_store_ops_on_the_dict(self):
        def handler(e):
            sdk.set_value("a", {"x": [1, 2]})
            n = sdk.add_values("hits", 2)
            big = sdk.add_values("big", 2**70)
            swapped = sdk.check_and_set_value("a", {"x": [1, 2]}, "b")
            missed = sdk.check_and_set_value("a", "nope", "c")
            sdk.del_value("gone")
            return n, big, swapped, missed, sdk.list_values_keys(), sdk.get_value("a")

        r = testing.run(handler, store={"hits": 1, "gone": 0})
        self.assertIsNone(r.error)
        self.assertEqual(r.value, (3, 2**70, True, False, ["a", "big", "hits"], "b"))
        self.assertEqual(r.store, {"hits": 3, "big": 2**70, "a": "b"})

    def test_autokitteh_spelling_and_errors(self):
        def handler(e):
            autokitteh.store["k"] = 1
            try:
                autokitteh.add_values("s", 1)
            except TypeError:
                kind = "TypeError"
            try:
                autokitteh.set_value("huge", "x" * 70_000)
            except AutoKittehError as err:
                over = str(err)
            return kind, over

        r = testing.run(handler, store={"s": "text"})
        self.assertIsNone(r.error)
        self.assertEqual(r.value[0], "TypeError")
        self.assertIn("65536 bytes per value", r.value[1])
        self.assertEqual(r.store, {"s": "text", "k": 1})


class SessionsTest(unittest.TestCase):
    def test_start_signal_next_signal_recorded(self):
        def handler(e):
            child = sdk.start("jobs.py:run", {"n": 1}, memo={"why": "test"})
            sdk.signal(child, "go", {"at": 1})
            first = sdk.next_signal(["done", "other"], timeout=5)
            none = sdk.next_signal("done", timeout=0)
            return child, first, none

        r = testing.run(handler, signals=[("skip", 0), ("done", 42)])
        self.assertIsNone(r.error)
        child, first, none = r.value
        self.assertEqual(r.started[0].loc, "jobs.py:run")
        self.assertEqual(r.started[0].data, {"n": 1})
        self.assertEqual(r.started[0].session_id, child)
        self.assertEqual(r.signals_sent, [testing.SentSignal(child, "go", {"at": 1})])
        self.assertEqual((first.name, first.payload), ("done", 42))
        self.assertIsNone(none)
        self.assertEqual(r.next_signals[1], (["done"], 0.0, None))

    def test_signal_to_itself_and_wait_without_timeout(self):
        def handler(e):
            sdk.signal(e.session_id, "me", 1)
            got = sdk.next_signal("me")
            return got.payload, sdk.next_signal("me")

        r = testing.run(handler)
        self.assertEqual(r.value, (1, None))
        self.assertTrue(any("next_signal without a timeout" in w for w in r.warnings))

    def test_start_event_gives_the_started_handler_its_data(self):
        def child(e):
            return e.event_type, e.data["n"], e.data["raw"]

        r = testing.run(child, testing.start_event({"n": 2**70, "raw": b"\x00"}))
        self.assertEqual(r.value, ("start", 2**70, b"\x00"))

    def test_other_project_refused(self):
        r = testing.run(lambda e: sdk.start("a.py:f", project="elsewhere"))
        self.assertEqual(r.error.type, "ValueError")


class OutcomeAndUrlsTest(unittest.TestCase):
    def test_outcome_and_webhook_url(self):
        def handler(e):
            sdk.outcome({"n": 1})
            sdk.outcome({"n": 2})
            return sdk.get_webhook_url("hook")

        r = testing.run(handler, webhook_urls={"hook": "https://h/webhooks/x"})
        self.assertEqual(r.value, "https://h/webhooks/x")
        self.assertEqual(r.outcome_values, [{"n": 1}, {"n": 2}])
        self.assertEqual(r.outcome_value, {"n": 2})

    def test_unknown_trigger_is_a_value_error(self):
        r = testing.run(lambda e: sdk.get_webhook_url("nope"))
        self.assertEqual(r.error.type, "ValueError")

    def test_refused_inside_an_activity(self):
        @sdk.activity
        def inside():
            return sdk.get_value("k")

        r = testing.run(lambda e: inside())
        self.assertEqual(r.error.type, "RuntimeError")
        self.assertIn("inside an activity", r.error.message)


if __name__ == "__main__":
    unittest.main()
