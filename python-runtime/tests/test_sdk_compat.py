"""AutoKitteh compatibility: inline calls, errors, integration modules, next_event/http_outcome forms."""

import base64
import os
import subprocess
import sys
import unittest

from .harness import RUNTIME_DIR, FakeService, ForkServer, make_event


class CompatSessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def ok(self, handler, **kwargs):
        r = self.server.run({"handlers.py": handler}, **kwargs)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        return r

    def test_inhibit_activities_context_manager_and_decorator(self):
        handler = """
            import os, time, autokitteh
            @autokitteh.inhibit_activities
            def build():
                return os.getpid(), time.time() > 0
            def on_post(event):
                with autokitteh.inhibit_activities():
                    a = os.getpid()
                    autokitteh.set_value("k", 1)   # service calls still work inline
                b, ok = build()
                c = os.getpid()                    # after the block: an activity again
                print(a == b, ok, c > 0)
            """
        r = self.ok(handler)
        self.assertEqual(r.prints, ["True True True"])
        self.assertEqual([m["function"] for m in r.of("activity")], ["posix.getpid"])
        self.assertEqual(len(r.of("store")), 1)
        # Durable: inline calls are not journaled, so a replay runs them again.
        live = self.ok(handler, durable=True)
        self.assertEqual([s["kind"] for s in live.journal()], ["store", "activity"])
        replay = self.ok(handler, durable=True, journal=live.journal())
        self.assertEqual(replay.of("activity"), [])
        self.assertEqual(replay.prints, ["True True True"])

    def test_register_no_activity(self):
        r = self.ok(
            """
            import os, random, autokitteh
            from fractions import Fraction
            autokitteh.register_no_activity(os.getpid)
            autokitteh.register_no_activity([random.Random])
            def on_post(event):
                rnd = random.Random(7)
                print(os.getpid() > 0, rnd.randint(1, 1), os.getppid() > 0)
                try:
                    autokitteh.register_no_activity([[]])
                except TypeError as e:
                    print("TypeError")
            """
        )
        self.assertEqual(r.prints, ["True 1 True", "TypeError"])
        self.assertEqual([m["function"] for m in r.of("activity")], ["posix.getppid"])

    def test_next_event_full_and_http_outcome_event_id(self):
        service = FakeService(events=[make_event(body=b"one"), make_event(body=b"two")])
        r = self.ok(
            """
            import autokitteh
            def on_post(event):
                sid = autokitteh.subscribe("t")
                e = autokitteh.next_event(sid, full=True)
                print(e.event_id, e.data.body.text, e.body.text)
                d = autokitteh.next_event(sid, full=False)
                print(d.body.text, d["body"]["text"])
                autokitteh.http_outcome(200, body="x", event_id=e.event_id)
                autokitteh.http_outcome(201, "plain")
                for bad in (lambda: autokitteh.next_event(sid, full="yes"),
                            lambda: autokitteh.http_outcome(200, event_id=5)):
                    try:
                        bad()
                    except ValueError as err:
                        print("ValueError", str(err).split(":")[0])
            """,
            service=service,
        )
        self.assertEqual(
            r.prints, ["evt_test one one", "two two", "ValueError next_event", "ValueError http_outcome"]
        )
        first, second = r.outcomes
        self.assertEqual((first["event_id"], base64.b64decode(first["body"])), ("evt_test", b"x"))
        self.assertNotIn("event_id", second)

    def test_errors_and_integrations_in_a_session(self):
        r = self.ok(
            """
            from autokitteh import errors
            from autokitteh.errors import AutoKittehError, ConnectionInitError
            from autokitteh.slack import slack_client
            import autokitteh.salesforce, workflow_sdk
            def on_post(event):
                try:
                    slack_client("my_slack")
                except ConnectionInitError as e:
                    print(type(e).__name__, "|", e)
                try:
                    autokitteh.salesforce.salesforce_client("h")
                except ConnectionInitError as e:
                    print("not supported by this service yet" in str(e))
                print(issubclass(workflow_sdk.WorkflowError, errors.AutoKittehError))
            """
        )
        self.assertEqual(
            r.prints,
            [
                "ConnectionInitError | AutoKitteh connection 'my_slack' not initialized: set "
                "my_slack__oauth_access_token or my_slack__private_bot_token (cli var set --secret)",
                "True",
                "True",
            ],
        )
        self.assertEqual(r.of("activity"), [])


class ImportTest(unittest.TestCase):
    """Imports as AutoKitteh programs write them, in a fresh interpreter (no session)."""

    def run_python(self, code):
        env = {**os.environ, "PYTHONPATH": RUNTIME_DIR}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.split()

    def test_aliases_are_the_same_modules(self):
        out = self.run_python(
            "import autokitteh, workflow_sdk\n"
            "import autokitteh.errors, autokitteh.store, autokitteh.github\n"
            "from autokitteh.store import Op\n"
            "from autokitteh import AttrDict, Event, Signal, store, errors\n"
            "from autokitteh import activity, inhibit_activities, register_no_activity\n"
            "print(autokitteh.errors is workflow_sdk.errors, autokitteh.github is workflow_sdk.github)\n"
            "autokitteh.store['k'] = 2 ** 80\n"  # `import autokitteh.store` bound the module: still a view
            "print(autokitteh.store['k'] == workflow_sdk.store['k'] == 2 ** 80, 'k' in autokitteh.store)\n"
            "print(all(hasattr(autokitteh, n) for n in autokitteh.__all__))\n"
        )
        self.assertEqual(out, ["True", "True", "True", "True", "True"])

    def test_aio_and_packages(self):
        out = self.run_python(
            "import asyncio\n"
            "from autokitteh import aio, packages\n"
            "async def main():\n"
            "    await aio.set_value('k', 2)\n"
            "    return await aio.add_values('k', 1)\n"
            "print(asyncio.run(main()), hasattr(aio, 'store'), hasattr(aio, 'next_signal'))\n"
            "try:\n"
            "    packages.install('requests')\n"
            "except RuntimeError as e:\n"
            "    print('requirements.txt' in str(e))\n"
        )
        self.assertEqual(out, ["3", "False", "True", "True"])

    def test_event_data_is_stored_as_json(self):
        out = self.run_python(
            "import json, collections\n"
            "from workflow_sdk.event import event_from_wire\n"
            "from workflow_sdk.values import encode, decode\n"
            "e = event_from_wire(\n"
            "    {'data': {'headers': {'X-A': '1'}, 'body': {'bytes': 'eA=='}, 'n': 2**60}}\n"
            ")\n"
            "w = encode(e.data)\n"
            "print(json.dumps(w, sort_keys=True).replace(' ', ''))\n"
            "d = decode(json.loads(json.dumps(encode(collections.OrderedDict(a=1)))))\n"
            "print(type(d).__name__)\n"
        )
        self.assertEqual(
            out,
            [
                '{"body":{"bytes":{"$bytes":"eA=="}},"headers":{"X-A":"1"},"n":{"$int":"1152921504606846976"}}',
                "OrderedDict",
            ],
        )

    def test_unknown_submodule_still_fails(self):
        env = {**os.environ, "PYTHONPATH": RUNTIME_DIR}
        out = subprocess.run(
            [sys.executable, "-c", "import autokitteh.nope"], env=env, capture_output=True, text=True
        )
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("No module named 'autokitteh.nope'", out.stderr)

    def test_store_outside_a_session_is_local(self):
        out = self.run_python(
            "import autokitteh as ak\n"
            "ak.set_value('a', 1); print(ak.add_values('a', 2**70), ak.check_and_set_value('a', 1, 0))\n"
            "print(ak.list_values_keys(), ak.mutate_value('a', 'del'), ak.get_value('a'))\n"
        )
        self.assertEqual(out, [str(2**70 + 1), "False", "['a']", "None", "None"])


if __name__ == "__main__":
    unittest.main()
