"""The pickling rule: durable sessions, and non-durable ones of `version: v2` manifests
(`pickle_values`), pickle activity values and fail on unpicklable ones; other non-durable
sessions (`version: v1`) pass them as they are, as AutoKitteh does."""

import unittest

from .harness import ForkServer


class PicklingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def run_session(self, handler, **kwargs):
        return self.server.run({"handlers.py": handler}, **kwargs)

    def assertDoneOk(self, result):
        self.assertEqual(result.done, {"type": "done", "ok": True}, result.messages)

    def assertDoneError(self, result, *fragments):
        done = result.done
        self.assertIsNotNone(done, result.messages)
        self.assertFalse(done["ok"], result.messages)
        for fragment in fragments:
            self.assertIn(fragment, done["error"])
        return done

    def test_unpicklable_argument_names_function(self):
        r = self.run_session("import shutil\ndef on_post(e):\n    shutil.which(lambda: 0)\n", durable=True)
        done = self.assertDoneError(r, "UnpicklableError", "shutil.which", "@workflow_sdk.activity")
        self.assertIn("handlers.py", done["traceback"])

    def test_unpicklable_result_names_function(self):
        r = self.run_session("import threading\ndef on_post(e):\n    threading.Lock()\n", durable=True)
        self.assertDoneError(r, "UnpicklableError", "result", "allocate_lock", "@workflow_sdk.activity")

    def test_unpicklable_result_of_decorated_activity(self):
        r = self.run_session(
            "import workflow_sdk\n@workflow_sdk.activity\ndef mk():\n    return lambda: 1\n"
            "def on_post(e):\n    mk()\n",
            durable=True,
        )
        self.assertDoneError(r, "UnpicklableError", "handlers.mk", "picklable")

    def test_non_durable_activities_pass_values_as_they_are(self):
        # AutoKitteh runs a non-durable session as plain Python: unpicklable values are fine there.
        r = self.run_session(
            """
            import threading, workflow_sdk
            @workflow_sdk.activity
            def mk():
                return lambda: "from a lambda"
            def on_post(e):
                lock = threading.Lock()           # an activity whose result cannot be pickled
                with lock:
                    print(mk()(), type(lock).__name__)
                items = []
                workflow_sdk.activity(items.append)(1)   # arguments pass by reference, not copied
                print(items)
            """
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["from a lambda lock", "[1]"])
        self.assertIn("_thread.allocate_lock", [m["function"] for m in r.of("activity")])

    def test_v2_non_durable_sessions_pickle_too(self):
        # The spec's errors table: a value that cannot be pickled fails the session, in both modes.
        r = self.run_session("import threading\ndef on_post(e):\n    threading.Lock()\n", pickle_values=True)
        self.assertDoneError(r, "UnpicklableError", "result", "allocate_lock", "@workflow_sdk.activity")
        self.assertEqual([m for m in r.messages if m["type"] == "step"], [])  # nothing journaled
        r = self.run_session(
            """
            import workflow_sdk
            @workflow_sdk.activity
            def add(items):
                items.append(1)
            def on_post(e):
                items = []
                add(items)                               # the activity gets a copy now
                print(items)
            """,
            pickle_values=True,
        )
        self.assertDoneOk(r)
        self.assertEqual(r.prints, ["[]"])


EXCEPTION = """
    import workflow_sdk

    class X(Exception):
        def __init__(self, a, b):
            super().__init__(a)        # args (1,) do not make an X again

    @workflow_sdk.activity
    def fails():
        raise X(1, 2)

    def on_post(e):
        try:
            fails()
        except X as err:
            print("caught", type(err).__name__, err.args)
        fails()
    """


class ExceptionRebuildTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_an_exception_args_do_not_rebuild_shows_as_autokitteh_does(self):
        for start in ({"durable": True}, {"pickle_values": True}, {}):
            with self.subTest(**start):
                r = self.server.run({"handlers.py": EXCEPTION}, **start)
                self.assertFalse(r.done["ok"])
                if start:
                    self.assertEqual(r.prints, ["caught X (1, None)"], r.messages)
                    self.assertEqual(r.done["error"], "X(1, None)")
                    self.assertEqual([a["error"] for a in r.of("activity")], ["X(1, None)", "X(1, None)"])
                    # The traceback ends as Python prints the exception (AutoKitteh's session tests).
                    self.assertEqual(r.done["traceback"].splitlines()[-1], "handlers.X: (1, None)")
                else:  # passed as it is: the original exception while caught; uncaught, its args
                    # padded as AutoKitteh pads them (pure_uncaught_unpicklable_exception)
                    self.assertEqual(r.prints, ["caught X (1,)"], r.messages)
                    self.assertEqual(r.done["error"], "X(1, None)")
                    self.assertEqual(r.done["traceback"].splitlines()[-1], "handlers.X: (1, None)")

    def test_a_missing_argument_is_taken_from_its_attribute(self):
        code = EXCEPTION.replace("super().__init__(a)", "self.b = b; super().__init__(a)")
        r = self.server.run({"handlers.py": code}, durable=True)
        self.assertEqual(r.prints, ["caught X (1, 2)"], r.messages)
        self.assertEqual(r.done["error"], "X(1, 2)")
        self.assertEqual(r.done["traceback"].splitlines()[-1], "handlers.X: (1, 2)")

    def test_a_replay_raises_the_rebuilt_exception_again(self):
        first = self.server.run({"handlers.py": EXCEPTION}, durable=True)
        replay = self.server.run({"handlers.py": EXCEPTION}, durable=True, journal=first.journal())
        self.assertEqual(replay.done["error"], "X(1, None)")
        self.assertEqual(replay.of("activity"), [])  # nothing ran again


if __name__ == "__main__":
    unittest.main()


class PadArgsTest(unittest.TestCase):
    """The handler's uncaught exception, its args padded as AutoKitteh pads them (rebuild.pad_args)."""

    def test_missing_args_come_from_attributes_else_none(self):
        from workflow_sdk.runner.rebuild import pad_args
        from workflow_sdk.runner.tracebacks import exc_text

        class X(Exception):
            def __init__(self, a, b, c=3):
                self.c = c
                super().__init__(a)

        err = pad_args(X(1, 2))
        self.assertEqual(err.args, (1, None, 3))
        self.assertEqual(exc_text(err), "X(1, None, 3)")

    def test_others_as_they_are(self):
        from workflow_sdk.runner.rebuild import pad_args
        from workflow_sdk.runner.tracebacks import exc_text

        class Y(Exception):
            def __init__(self, a, b):
                super().__init__(a, b)

        from workflow_sdk.errors import OAuthRefreshError

        sdk = OAuthRefreshError("gmail", "invalid_grant")
        for err, text in (
            (ValueError("bad"), "ValueError: bad"),
            (Y(1, 2), "Y: (1, 2)"),
            (KeyError(), "KeyError"),
            (sdk, "OAuthRefreshError: OAuth refresh failed for 'gmail' connection: invalid_grant"),
        ):
            self.assertEqual(exc_text(pad_args(err)), text)
