"""workflow_sdk.testing: subscribe / next_event from queued events, and recorded activities."""

import asyncio
import threading
import unittest
from datetime import timedelta

import workflow_sdk
from workflow_sdk import testing

from .harness import write_project


def decision(verdict, ticket="t-7"):
    return testing.event(json={"ticket": ticket, "verdict": verdict})


class EventsTest(unittest.TestCase):
    def test_next_event_serves_the_queue_in_order_then_none(self):
        def handler(event):
            sub = workflow_sdk.subscribe("decisions", 'data.body.json.ticket == "t-7"')
            got = [workflow_sdk.next_event(sub, timeout=timedelta(seconds=20)) for _ in range(2)]
            got.append(workflow_sdk.next_event(sub, timeout=0))
            return [e and e.data.body.json.verdict for e in got]

        r = testing.run(handler, events={"decisions": [decision("a"), decision("b")]})
        self.assertEqual(r.value, ["a", "b", None])
        self.assertEqual(len(r.subscriptions), 1)
        sub = r.subscriptions[0]
        self.assertEqual(
            (sub.name, sub.filter, sub.active), ("decisions", 'data.body.json.ticket == "t-7"', True)
        )
        self.assertTrue(sub.id.startswith("sub_"))
        self.assertEqual([n.timeout for n in r.next_events], [20.0, 20.0, 0.0])
        self.assertEqual(r.next_events[0].ids, [sub.id])
        self.assertIsInstance(r.next_events[0].event, workflow_sdk.Event)
        self.assertIsNone(r.next_events[2].event)
        self.assertEqual(r.warnings, [])

    def test_no_timeout_and_an_empty_queue_returns_none_with_a_warning(self):
        r = testing.run(lambda e: workflow_sdk.next_event(workflow_sdk.subscribe("d")), events={"d": []})
        self.assertTrue(r.ok)
        self.assertIsNone(r.value)
        self.assertIn("would wait for ever", r.warnings[0])

    def test_served_events_are_copies(self):
        queued = decision("a")

        def handler(event):
            e = workflow_sdk.next_event(workflow_sdk.subscribe("d"), timeout=0)
            e.data.body["text"] = "changed"
            return e.session_id, e.event_id

        r = testing.run(handler, events={"d": [queued]})
        self.assertEqual(r.value, (None, queued.event_id))
        self.assertNotEqual(queued.data.body.text, "changed")

    def test_each_subscription_has_its_own_buffer_and_the_first_id_wins(self):
        def handler(event):
            a, b = workflow_sdk.subscribe("a"), workflow_sdk.subscribe("b")
            a2 = workflow_sdk.subscribe("a")
            first = workflow_sdk.next_event([b, a], timeout=0).data.body.text
            workflow_sdk.unsubscribe(b)
            return (
                first,
                workflow_sdk.next_event([a], timeout=0).data.body.text,
                workflow_sdk.next_event(a2).data.body.text,
            )

        r = testing.run(handler, events={"a": [testing.event(body="a1")], "b": [testing.event(body="b1")]})
        self.assertEqual(r.value, ("b1", "a1", "a1"))
        self.assertEqual([s.active for s in r.subscriptions], [True, False, True])

    def test_match_applies_filters(self):
        def handler(event):
            sub = workflow_sdk.subscribe("d", "t-7")
            return workflow_sdk.next_event(sub, timeout=0).data.body.json.verdict

        match = lambda flt, e: e.data.body.json.ticket == flt  # noqa: E731
        r = testing.run(handler, events={"d": [decision("no", "t-8"), decision("yes")]}, match=match)
        self.assertEqual(r.value, "yes")

    def test_refusals_as_in_the_service(self):
        cases = {
            lambda e: workflow_sdk.subscribe("nope"): ("ValueError", 'source "nope" not found'),
            lambda e: workflow_sdk.subscribe(""): ("ValueError", "name must be"),
            lambda e: workflow_sdk.next_event("sub_x", timeout=0): (
                "RuntimeError",
                'unknown subscription "sub_x"',
            ),
            lambda e: workflow_sdk.next_event(workflow_sdk.subscribe("d"), timeout=-1): (
                "ValueError",
                "timeout",
            ),
            lambda e: workflow_sdk.unsubscribe("sub_x"): ("ValueError", 'unknown subscription "sub_x"'),
        }
        for handler, (kind, text) in cases.items():
            r = testing.run(handler, events={"d": []})
            self.assertEqual(r.error.type, kind)
            self.assertIn(text, r.error.message)

    def test_events_must_be_lists_by_trigger_name(self):
        for events in ([testing.event()], {"d": testing.event()}, {"": []}, {"d": "evt"}):
            with self.subTest(events=events), self.assertRaises(TypeError):
                testing.run(lambda e: None, events=events)


@workflow_sdk.activity
def double(n):
    return n * 2


@workflow_sdk.activity
def fail(text):
    raise LookupError(text)


@workflow_sdk.activity
def make_lock():
    return threading.Lock()


@workflow_sdk.activity
def subscribe_inside():
    return workflow_sdk.subscribe("d")


@workflow_sdk.activity
def outer(n):
    return double(n) + 1  # an activity inside an activity just runs


@workflow_sdk.activity
async def slow_len(word):
    await asyncio.sleep(0.01)
    return len(word)


class ActivityTest(unittest.TestCase):
    def test_activities_are_recorded_with_args_and_results(self):
        r = testing.run(lambda e: double(21) + outer(n=1))
        self.assertEqual(r.value, 45)
        self.assertEqual([a.name for a in r.activities], [f"{__name__}.double", f"{__name__}.outer"])
        self.assertEqual(
            (r.activities[0].args, r.activities[0].result, r.activities[0].ok), ((21,), 42, True)
        )
        self.assertEqual(r.activities[1].kwargs, {"n": 1})

    def test_an_activity_error_is_raised_again_and_recorded(self):
        def handler(event):
            try:
                fail("missing")
            except LookupError as e:
                return f"caught {e}"

        r = testing.run(handler)
        self.assertEqual(r.value, "caught missing")
        self.assertIsInstance(r.activities[0].error, LookupError)
        self.assertFalse(r.activities[0].ok)

    def test_unpicklable_arguments_or_result_end_the_session_even_if_caught(self):
        def handler(event):
            try:
                double(threading.Lock())
            except Exception:
                return "caught"

        for h in (handler, lambda e: make_lock()):
            r = testing.run(h)
            self.assertEqual(r.error.type, "UnpicklableError")
            self.assertIsNone(r.value)
        self.assertIn("cannot pickle the result of activity", r.error.message)

    def test_sdk_waits_inside_an_activity_raise(self):
        r = testing.run(lambda e: subscribe_inside(), events={"d": []})
        self.assertEqual(r.error.type, "ActivityCallError")
        self.assertTrue(r.error.message.startswith("subscribe inside activity: "), r.error.message)
        self.assertIsInstance(r.error.exception, RuntimeError)
        self.assertIsInstance(r.error.exception, workflow_sdk.AutoKittehError)

    def test_async_activity_awaited_from_an_async_handler(self):
        async def handler(event):
            return [await slow_len(w) for w in ("ab", "abc")] + [slow_len.__name__]

        r = testing.run(handler)
        self.assertEqual(r.value, [2, 3, "slow_len"])
        self.assertEqual([a.result for a in r.activities], [2, 3])

    def test_an_async_activity_called_from_sync_code_blocks(self):
        self.assertEqual(testing.run(lambda e: slow_len("abcd")).value, 4)

    def test_mock_activities_replace_the_body(self):
        r = testing.run(lambda e: double(2), mock_activities={f"{__name__}.double": lambda n: -n})
        self.assertEqual(r.value, -2)
        self.assertEqual(r.activities[0].result, -2)

    def test_outside_a_session_an_activity_just_runs(self):
        self.assertEqual(double(3), 6)

    def test_an_activity_called_at_import_runs_directly(self):
        root = write_project(
            {
                "handlers.py": """
                    import workflow_sdk
                    @workflow_sdk.activity
                    def ten():
                        return 10
                    AT_IMPORT = ten()
                    def go(event):
                        return AT_IMPORT + ten()
                """
            },
            self,
        )
        r = testing.run("handlers.py:go", project_dir=root)
        self.assertEqual(r.value, 20)
        self.assertEqual([a.name for a in r.activities], ["handlers.ten"])


if __name__ == "__main__":
    unittest.main()
