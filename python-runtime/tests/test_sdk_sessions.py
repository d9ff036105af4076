"""start, signal, next_signal, a handler's session_id, outcome and get_webhook_url, through the runner."""

import unittest

from .harness import FakeService, ForkServer

HANDLER = """
    from datetime import timedelta
    import autokitteh
    def on_post(event, session_id):
        print("me", session_id)
        child = autokitteh.start("jobs.py:on_job", {"n": 2**64, "when": (1, 2)}, memo={"why": "test"})
        print("started", child)
        autokitteh.signal(child, "go", {"by": session_id})
        sig = autokitteh.next_signal(["approved", "rejected"], timeout=timedelta(seconds=5))
        print("got", sig.name, sig.payload, isinstance(sig, autokitteh.Signal))
        print("none", autokitteh.next_signal("approved", timeout=0))
        autokitteh.outcome({"total": 2**80})
        print(autokitteh.get_webhook_url("hook"))
        try:
            autokitteh.get_webhook_url("nope")
        except ValueError as e:
            print("ValueError", e)
        print("values", child, sig.payload)
    """

SIGNALS = [{"name": "other", "payload": None}, {"name": "rejected", "payload": {"why": {"$int": str(2**60)}}}]
EXPECTED = [
    "me ses_test",
    "started ses_started1",
    f"got rejected {{'why': {2**60}}} True",
    "none None",
    "http://127.0.0.1:9980/webhooks/0123456789abcdefghijklmnop",
    "ValueError no trigger named 'nope'",
    f"values ses_started1 {{'why': {2**60}}}",
]


class SessionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def run_handler(self, durable=False, journal=(), service=None):
        service = service or FakeService(signals=SIGNALS)
        r = self.server.run({"handlers.py": HANDLER}, service=service, durable=durable, journal=journal)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        return r, service

    def test_messages_and_values(self):
        r, service = self.run_handler()
        self.assertEqual(r.prints, EXPECTED)
        (start,) = r.of("start_session")
        self.assertEqual(
            {k: start[k] for k in ("loc", "data", "memo", "project")},
            {
                "loc": "jobs.py:on_job",
                "memo": {"why": "test"},
                "project": "",
                "data": {"n": {"$int": str(2**64)}, "when": start["data"]["when"]},
            },
        )
        self.assertIn("$pickle", start["data"]["when"])  # a tuple survives as a tuple
        (sig,) = r.of("signal")
        self.assertEqual(
            (sig["session_id"], sig["name"], sig["payload"]), ("ses_started1", "go", {"by": "ses_test"})
        )
        first, second = r.of("next_signal")
        self.assertEqual((first["names"], first["timeout"]), (["approved", "rejected"], 5.0))
        self.assertEqual((second["names"], second["timeout"]), (["approved"], 0.0))
        self.assertEqual(service.outcome_values, [{"total": {"$int": str(2**80)}}])
        self.assertEqual([m["trigger"] for m in r.of("webhook_url")], ["hook", "nope"])

    def test_durable_replay_returns_journaled_values(self):
        live, _ = self.run_handler(durable=True)
        journal = live.journal()
        self.assertEqual(
            [s["kind"] for s in journal],
            [
                "start_session",
                "signal",
                "next_signal",
                "next_signal",
                "outcome_value",
                "webhook_url",
                "webhook_url",
            ],
        )
        quiet = FakeService(signals=[])
        replay, _ = self.run_handler(durable=True, journal=journal, service=quiet)
        # Only what follows the last step prints again, with the journaled values.
        self.assertEqual(replay.prints, EXPECTED[-2:])
        self.assertEqual([m for m in replay.messages if "req" in m], [])
        self.assertEqual(quiet.started, [])

    def test_keyword_session_id_and_plain_handlers(self):
        r = self.server.run(
            {"handlers.py": "def on_post(event, *, session_id):\n    print(session_id, event.session_id)\n"}
        )
        self.assertEqual(r.prints, ["ses_test ses_test"])
        r = self.server.run({"handlers.py": "def on_post(event, other=None):\n    print(other)\n"})
        self.assertEqual(r.prints, ["None"])
        r = self.server.run(
            {"handlers.py": "async def on_post(event, session_id):\n    print('async', session_id)\n"}
        )
        self.assertEqual(r.prints, ["async ses_test"])

    def test_a_started_session_gets_the_data_exactly(self):
        # What the service sends a session made by start(): the caller's data, in its wire form.
        event = {
            "event_id": "evt_s",
            "session_id": "ses_test",
            "event_type": "start",
            "data_encoding": "sdk",
            "data": {"n": {"$int": str(2**64)}, "f": {"$float": "2"}, "body": "not http", "l": [1.5]},
        }
        r = self.server.run(
            {
                "handlers.py": "def on_job(event):\n    d = event.data\n"
                "    print(d.n, repr(d.f), d.body, d.l, event.event_type)\n"
            },
            entry="handlers.py:on_job",
            event=event,
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(r.prints, [f"{2**64} 2.0 not http [1.5] start"])

    def test_bad_arguments_raise_before_any_request(self):
        r = self.server.run(
            {
                "handlers.py": """
                import autokitteh
                def on_post(event):
                    for call in (
                        lambda: autokitteh.start("nofunction"),
                        lambda: autokitteh.start("a.py:f", [1]),
                        lambda: autokitteh.start("a.py:f", memo={"a": 1}),
                        lambda: autokitteh.signal("not-a-session", "x"),
                        lambda: autokitteh.next_signal([]),
                        lambda: autokitteh.next_signal("x", timeout=-1),
                        lambda: autokitteh.get_webhook_url(""),
                    ):
                        try:
                            call()
                        except ValueError as e:
                            print(str(e).split(":")[0])
                """
            }
        )
        self.assertEqual(
            r.prints, ["start", "start", "start", "signal", "next_signal", "next_signal", "get_webhook_url"]
        )
        self.assertEqual([m for m in r.messages if "req" in m], [])

    def test_refused_inside_an_activity(self):
        r = self.server.run(
            {
                "handlers.py": """
                import autokitteh
                CALLS = [lambda: autokitteh.start("a.py:f"), lambda: autokitteh.signal("ses_x", "n"),
                         lambda: autokitteh.next_signal("n"), lambda: autokitteh.outcome(1),
                         lambda: autokitteh.get_webhook_url("hook")]
                @autokitteh.activity
                def inside():
                    out = []
                    for call in CALLS:
                        try:
                            call()
                        except RuntimeError as e:
                            out.append(str(e).split(" inside activity")[0])
                    return out
                def on_post(event):
                    print(inside())
                """
            }
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        names = ["start", "signal", "next_signal", "outcome", "get_webhook_url"]
        self.assertEqual(r.prints, [str(names)])
        self.assertEqual([m for m in r.messages if "req" in m], [])


if __name__ == "__main__":
    unittest.main()
