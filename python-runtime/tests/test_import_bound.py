"""Importing modules has its own bound (watchdog.IMPORT_FACTOR times the workflow code's), at
module load or lazily in the handler; workflow code keeps its own. Real fork server, real imports."""

import unittest

from .harness import ForkServer

LIMIT = 0.5  # the workflow bound here; the import bound is 12 times it, 6 s
SLOW_MODULE = "import time\ntime.sleep({seconds})\nVALUE = 'loaded'\n"


class ImportBoundTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def run_files(self, handlers, seconds):
        files = {"handlers.py": handlers, "slow.py": SLOW_MODULE.format(seconds=seconds)}
        return self.server.run(files, workflow_timeout=LIMIT)

    def test_an_import_at_module_load_past_the_workflow_bound_is_fine(self):
        r = self.run_files("import slow\n\ndef on_post(e):\n    print(slow.VALUE)\n", 2)
        self.assertTrue(r.done["ok"], r.done)
        self.assertEqual(r.prints, ["loaded"])

    def test_a_lazy_import_in_the_handler_too(self):
        r = self.run_files("def on_post(e):\n    import slow\n    print(slow.VALUE)\n", 2)
        self.assertTrue(r.done["ok"], r.done)
        self.assertEqual(r.prints, ["loaded"])

    def test_an_import_past_its_own_bound_fails_the_session_saying_so(self):
        r = self.run_files("def on_post(e):\n    import slow\n", 8)
        self.assertFalse(r.done["ok"])
        self.assertIn("importing modules took more than 6 s", r.done["error"])

    def test_workflow_code_keeps_its_bound(self):
        spin = "def on_post(e):\n    while True:\n        pass\n"
        r = self.server.run({"handlers.py": spin}, workflow_timeout=LIMIT)
        self.assertFalse(r.done["ok"])
        self.assertIn("workflow code ran for more than 0.5 s outside an activity", r.done["error"])
