"""The pickling rule: durable sessions pickle activity values (and fail on unpicklable ones);
non-durable sessions pass them as they are, as AutoKitteh does."""

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


if __name__ == "__main__":
    unittest.main()
