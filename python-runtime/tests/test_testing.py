"""workflow_sdk.testing.run / Session: vars, prints, outcomes, errors, handler files, the seam."""

import asyncio
import os
import re
import subprocess
import sys
import unittest

import workflow_sdk
from workflow_sdk import seam, testing

from .harness import RUNTIME_DIR, write_project


def respond(status=200, **kw):
    return lambda event: workflow_sdk.http_outcome(status, **kw)


class VarsAndPrintsTest(unittest.TestCase):
    def test_vars_are_set_for_the_call_and_restored_after(self):
        os.environ["HL_KEEP"] = "before"
        self.addCleanup(os.environ.pop, "HL_KEEP", None)
        seen = {}
        testing.run(lambda e: seen.update(os.environ), vars={"HL_KEEP": "during", "HL_NEW": "1"})
        self.assertEqual((seen["HL_KEEP"], seen["HL_NEW"]), ("during", "1"))
        self.assertEqual(os.environ["HL_KEEP"], "before")
        self.assertNotIn("HL_NEW", os.environ)

    def test_vars_must_be_strings(self):
        with self.assertRaises(TypeError):
            testing.run(lambda e: None, vars={"N": 1})

    def test_prints_from_print_and_stream_writes(self):
        def handler(event):
            print("one\ntwo")
            sys.stderr.write("warn\n")
            sys.stdout.write("partial")

        stdout = sys.stdout
        r = testing.run(handler)
        self.assertIs(sys.stdout, stdout)
        self.assertEqual(r.prints, ["one", "two", "warn", "partial"])
        self.assertEqual((r.stdout, r.stderr), (["one", "two", "partial"], ["warn"]))
        self.assertEqual(r.output[2], testing.Print("warn", "stderr"))


class OutcomeTest(unittest.TestCase):
    def test_the_first_final_outcome_is_the_response(self):
        def handler(event):
            workflow_sdk.http_outcome(102, "working", more=True)
            workflow_sdk.http_outcome(201, {"Location": "/items/7"}, json={"id": 7})
            workflow_sdk.http_outcome(500, "late")

        r = testing.run(handler)
        self.assertEqual([o.status for o in r.outcomes], [102, 201, 500])
        self.assertEqual([o.sent for o in r.outcomes], [False, True, False])
        self.assertEqual(r.outcomes[0].more, True)
        self.assertEqual((r.response.status, r.response.status_code), (201, 201))
        self.assertEqual(r.response.headers["location"], "/items/7")
        self.assertEqual(r.response.headers["Content-Type"], "application/json")
        self.assertEqual((r.response.body, r.response.json), (b'{"id":7}', {"id": 7}))
        self.assertEqual(r.warnings, ["the response was already sent: this outcome changes nothing"])

    def test_no_final_outcome_no_response(self):
        r = testing.run(respond(202, more=True))
        self.assertIsNone(r.response)
        r = testing.run(respond(204))
        self.assertEqual((r.response.body, r.response.text, r.response.json), (None, "", None))

    def test_the_sdk_validation_applies(self):
        bad = [
            respond(600),
            respond(True),
            respond(200, headers={"X-A": "1\r\nX-B: 2"}),
            respond(200, headers={"X-A:": "1"}),
            respond(200, body="x", json={}),
            respond(200, body=42),
        ]
        for handler in bad:
            r = testing.run(handler)
            self.assertEqual(r.error.type, "ValueError", r.error)
            self.assertEqual(r.outcomes, [])

    def test_a_caught_validation_error_lets_the_handler_go_on(self):
        def handler(event):
            try:
                workflow_sdk.http_outcome("200")
            except ValueError:
                workflow_sdk.http_outcome(400, "fixed")

        r = testing.run(handler)
        self.assertTrue(r.ok)
        self.assertEqual(r.response.text, "fixed")


class ErrorTest(unittest.TestCase):
    def test_an_exception_becomes_result_error(self):
        def on_order(event):
            return {}["sku"]

        r = testing.run(on_order)
        self.assertEqual((r.ok, r.state), (False, "error"))
        self.assertEqual(
            (r.error.type, r.error.message, str(r.error)), ("KeyError", "'sku'", "KeyError: 'sku'")
        )
        self.assertIn("in on_order", r.error.traceback)
        self.assertNotIn("workflow_sdk", r.error.traceback)
        self.assertIsInstance(r.error.exception, KeyError)
        with self.assertRaises(KeyError):
            r.raise_error()

    def test_raise_errors_raises_and_still_restores(self):
        with self.assertRaises(ZeroDivisionError):
            testing.run(lambda e: 1 / 0, vars={"HL_TMP": "x"}, raise_errors=True)
        self.assertIsNone(seam.current)
        self.assertNotIn("HL_TMP", os.environ)

    def test_sys_exit(self):
        self.assertTrue(testing.run(lambda e: sys.exit(0)).ok)
        r = testing.run(lambda e: sys.exit(3))
        self.assertEqual(str(r.error), "SystemExit: 3")


class AsyncAndValueTest(unittest.TestCase):
    def test_async_handler_runs_with_asyncio_run(self):
        async def handler(event):
            await asyncio.sleep(0)
            workflow_sdk.http_outcome(200, "async")
            return "done"

        r = testing.run(handler)
        self.assertEqual((r.value, r.response.text), ("done", "async"))

    def test_async_handler_error(self):
        async def handler(event):
            raise RuntimeError("boom")

        self.assertEqual(str(testing.run(handler).error), "RuntimeError: boom")

    def test_the_handler_gets_its_event_with_the_session_id(self):
        got = []
        r = testing.run(got.append, testing.event(json={"a": 1}), session_id="ses_mine")
        self.assertEqual((got[0].session_id, r.session_id), ("ses_mine", "ses_mine"))
        self.assertEqual(got[0].data.body.json, {"a": 1})
        self.assertIs(r.event, got[0])
        self.assertTrue(testing.run(got.append).session_id.startswith("ses_"))
        self.assertEqual(testing.run(got.append, testing.event(session_id="ses_ev")).session_id, "ses_ev")
        self.assertEqual(got[-1].session_id, "ses_ev")


class StoreTest(unittest.TestCase):
    def test_the_store_is_reachable_through_the_state_hook(self):
        given = {"count": 1}

        def handler(event):
            seam.store()["count"] += 1

        r = testing.run(handler, store=given)
        self.assertEqual((r.store, given), ({"count": 2}, {"count": 1}))
        self.assertIsNone(seam.store())
        self.assertEqual(testing.run(lambda e: seam.store()).value, {})


class HandlerFileTest(unittest.TestCase):
    def setUp(self):
        self.root = write_project(
            {
                "handlers.py": """
                    import os
                    import helper
                    import workflow_sdk
                    NAME = os.environ["NAME"]
                    def on_post(event):
                        workflow_sdk.http_outcome(200, f"{NAME} {helper.VALUE} {open('data.txt').read()}")
                """,
                "helper.py": "import os\nVALUE = os.environ['NAME'].upper()\n",
                "data.txt": "from-cwd",
                "pkg/__init__.py": "",
                "pkg/mod.py": "def go(event):\n    return __name__\n",
            },
            self,
        )

    def test_module_is_imported_afresh_with_vars_in_the_project_folder(self):
        cwd, path = os.getcwd(), list(sys.path)
        for name in ("Ada", "Bob"):
            r = testing.run("handlers.py:on_post", vars={"NAME": name}, project_dir=self.root)
            self.assertEqual(r.response.text, f"{name} {name.upper()} from-cwd")
        self.assertEqual((os.getcwd(), sys.path), (cwd, path))
        self.assertNotIn("handlers", sys.modules)
        self.assertNotIn("helper", sys.modules)

    def test_a_module_of_the_same_name_is_put_back(self):
        sentinel = type(sys)("handlers")
        sys.modules["handlers"] = sentinel
        self.addCleanup(sys.modules.pop, "handlers", None)
        testing.run("handlers.py:on_post", vars={"NAME": "x"}, project_dir=self.root)
        self.assertIs(sys.modules["handlers"], sentinel)

    def test_package_module_name_as_in_the_runner(self):
        self.assertEqual(testing.run("pkg/mod.py:go", project_dir=self.root).value, "pkg.mod")

    def test_import_error_and_missing_function_are_session_errors(self):
        r = testing.run("handlers.py:on_post", project_dir=self.root)
        self.assertEqual(str(r.error), "KeyError: 'NAME'")
        self.assertIn('handlers.py", line 3, in <module>', r.error.traceback)
        self.assertIn('helper.py", line 2, in <module>', r.error.traceback)
        self.assertNotIn("importlib", r.error.traceback)
        r = testing.run("handlers.py:nope", vars={"NAME": "x"}, project_dir=self.root)
        self.assertEqual(r.error.type, "WorkflowError")

    def test_bad_entries_raise_at_once(self):
        for entry in ("handlers:on_post", "../x.py:f", "handlers.py:", "/abs.py:f", "missing.py:f"):
            with self.subTest(entry=entry), self.assertRaises(ValueError):
                testing.run(entry, project_dir=self.root)
        with self.assertRaises(TypeError):
            testing.run(42)

    def test_relative_entries_resolve_from_the_callers_folder(self):
        r = testing.run("entry_here.py:session_id_of", session_id="ses_here")  # this test's folder
        self.assertEqual(r.value, "ses_here")
        r = testing.run("entry_here.py:session_id_of", session_id="ses_2", project_dir=None)
        self.assertEqual(r.value, "ses_2")


class SessionObjectTest(unittest.TestCase):
    def test_sdk_calls_inside_the_with_block_are_recorded(self):
        with testing.Session(vars={"HL_V": "1"}) as s:
            self.assertIsNot(seam.current, None)
            workflow_sdk.http_outcome(204)
            print(os.environ["HL_V"])
        self.assertIsNone(seam.current)
        self.assertEqual((s.result.response.status, s.result.prints), (204, ["1"]))

    def test_one_session_at_a_time_one_run_per_session(self):
        with testing.Session() as s:
            with self.assertRaises(RuntimeError), testing.Session():
                pass
            s.run(lambda e: None)
            with self.assertRaises(RuntimeError):
                s.run(lambda e: None)
        with self.assertRaises(RuntimeError):
            testing.Session().run(lambda e: None)

    def test_outside_a_session_the_sdk_behaves_as_before(self):
        testing.run(lambda e: None)
        with self.assertRaises(workflow_sdk.WorkflowError):
            workflow_sdk.subscribe("x")

    def test_autokitteh_spelling(self):
        from autokitteh import testing as ak_testing

        self.assertIs(ak_testing.run, testing.run)

    def test_the_example_in_docs_testing_md_passes(self):
        with open(os.path.join(RUNTIME_DIR, "..", "docs", "testing.md")) as f:
            blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", f.read(), re.S)
        self.assertEqual([name for name, _ in blocks], ["handlers.py", "test_handlers.py"])
        root = write_project(dict(blocks), self)
        env = {**os.environ, "PYTHONPATH": RUNTIME_DIR, "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run(
            [sys.executable, "-m", "unittest"], cwd=root, env=env, capture_output=True, text=True
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Ran 2 tests", out.stderr)

    def test_docstring_examples(self):
        import doctest
        import importlib

        modules = ("", ".events", ".backend", ".result", ".session", ".service", ".connections")
        for name in (*modules, ".google_events"):
            module = importlib.import_module("workflow_sdk.testing" + name)
            self.assertEqual(doctest.testmod(module).failed, 0, module.__name__)
        self.assertEqual(doctest.testmod(seam).failed, 0)

    def test_importing_workflow_sdk_does_not_import_the_kit(self):
        code = "import sys, workflow_sdk, autokitteh; print('workflow_sdk.testing' in sys.modules)"
        out = subprocess.run([sys.executable, "-c", code], cwd=RUNTIME_DIR, capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), "False", out.stderr)


if __name__ == "__main__":
    unittest.main()
