import json
import os
import subprocess
import sys
import unittest

from workflow_sdk.runner.check import check

from .harness import RUNTIME_DIR, write_project


class CheckTest(unittest.TestCase):
    def test_good_project(self):
        root = write_project(
            {"handlers.py": "def on_post(e):\n    pass\n", "pkg/mod.py": "async def h(e):\n    pass\n"}, self
        )
        self.assertEqual(check(root, ["handlers.py:on_post", "pkg/mod.py:h"]), [])

    def test_errors(self):
        root = write_project(
            {"h.py": "def f(e):\n    def inner(): pass\n", "bad.py": "x = 1\ndef (:\n"}, self
        )
        errors = check(root, ["h.py:missing", "h.py:inner", "../x.py:f", "/abs.py:f", "nope.py:f", "h.py"])
        self.assertEqual(errors[0], "bad.py:2: SyntaxError: invalid syntax")
        self.assertIn('call "h.py:missing": no top-level function "missing" in h.py', errors)
        self.assertIn('call "h.py:inner": no top-level function "inner" in h.py', errors)
        self.assertTrue(any(e.startswith('call "../x.py:f"') for e in errors))
        self.assertTrue(any(e.startswith('call "/abs.py:f"') for e in errors))
        self.assertIn('call "nope.py:f": file nope.py not found', errors)
        self.assertTrue(any(e.startswith('call "h.py":') for e in errors))

    def test_cli(self):
        root = write_project({"h.py": "def f(e): pass\n"}, self)
        env = {**os.environ, "PYTHONPATH": RUNTIME_DIR}

        def run(*args):
            return subprocess.run(
                [sys.executable, "-m", "workflow_sdk.runner", *args], capture_output=True, text=True, env=env
            )

        ok = run("check", "--dir", root, "--call", "h.py:f")
        self.assertEqual((ok.returncode, json.loads(ok.stdout)), (0, {"ok": True}))
        bad = run("check", "--dir", root, "--call", "h.py:g")
        self.assertEqual(bad.returncode, 0)
        self.assertFalse(json.loads(bad.stdout)["ok"])
        self.assertEqual(run("check").returncode, 2)
        version = run("version")
        self.assertEqual(json.loads(version.stdout)["sdk"], "0.1.0")


if __name__ == "__main__":
    unittest.main()
