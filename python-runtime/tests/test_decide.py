import collections
import datetime
import functools
import hashlib
import hmac
import json
import os
import random
import re
import time
import types
import unittest
import urllib.parse
import uuid

import workflow_sdk
from workflow_sdk.runner.activities import Activities

HERE = __file__


class FakeSession:
    workflow_ident = None


def third_party_module():
    """A module that stands for a third-party package (its functions are not project code)."""
    mod = types.ModuleType("thirdparty.client")
    exec(
        "class Client:\n    def get(self, url): return url\n"
        "def fetch(x): return x\n"
        "async def afetch(x): return x\n",
        mod.__dict__,
    )
    return mod


def project_function():
    return 1


class DecideTest(unittest.TestCase):
    def setUp(self):
        self.acts = Activities(FakeSession(), in_project_file=lambda filename: filename == HERE)

    def direct(self, f):
        self.assertIsNone(self.acts.decide(f), f)

    def activity(self, f, name=None):
        got = self.acts.decide(f)
        self.assertIsNotNone(got, f)
        if name:
            self.assertEqual(got, name)

    def test_builtins_and_builtin_methods(self):
        for f in (
            len,
            print,
            isinstance,
            sorted,
            [].append,
            ",".join,
            str.join,
            dict.get,
            {}.get,
            b"".decode,
            int.from_bytes,
            dict,
            list,
            ValueError,
            (1).__add__,
        ):
            self.direct(f)

    def test_pure_stdlib(self):
        for f in (
            json.dumps,
            json.loads,
            re.compile,
            re.compile("a").match,
            hashlib.sha256,
            hashlib.sha256(b"").hexdigest,
            hmac.new,
            hmac.compare_digest,
            datetime.timedelta,
            datetime.datetime.fromisoformat,
            collections.OrderedDict,
            collections.Counter,
            functools.reduce,
            urllib.parse.quote,
            urllib.parse.urlencode,
            uuid.UUID,
            os.path.join,
        ):
            self.direct(f)

    def test_clock_and_io_are_activities(self):
        self.activity(datetime.datetime.now, "datetime.datetime.now")
        self.activity(datetime.datetime.utcnow, "datetime.datetime.utcnow")
        self.activity(datetime.date.today, "datetime.date.today")
        self.activity(time.sleep, "time.sleep")
        self.activity(time.time, "time.time")
        self.activity(random.random)
        self.activity(os.getenv, "os.getenv")
        self.activity(uuid.uuid4, "uuid.uuid4")

    def test_sdk_and_project_code_are_direct(self):
        self.direct(workflow_sdk.http_outcome)
        self.direct(workflow_sdk.subscribe)
        self.direct(project_function)
        self.direct(lambda: 1)  # defined in the project file

    def test_third_party_functions_classes_and_methods(self):
        mod = third_party_module()
        self.activity(mod.fetch, "thirdparty.client.fetch")
        self.activity(mod.Client, "thirdparty.client.Client")
        self.activity(mod.Client().get, "thirdparty.client.Client.get")
        self.direct(mod.afetch)  # its coroutine could neither be pickled nor awaited elsewhere

    def test_activity_decorated_functions_handle_themselves(self):
        mod = third_party_module()
        self.direct(workflow_sdk.activity(mod.fetch))

    def test_decision_is_cached(self):
        self.acts.decide(time.sleep)
        self.assertIn(time.sleep, self.acts._cache)


class ActivityDecoratorTest(unittest.TestCase):
    def test_checks_at_definition(self):
        with self.assertRaises(TypeError):
            workflow_sdk.activity(42)
        with self.assertRaises(TypeError):
            workflow_sdk.activity(staticmethod(lambda: 1))

    def test_outside_a_session_calls_directly(self):
        @workflow_sdk.activity
        def add(a, b):
            return a + b

        self.assertEqual(add(1, 2), 3)
        self.assertEqual(add.__name__, "add")

    def test_event_functions_need_a_session(self):
        with self.assertRaises(workflow_sdk.WorkflowError):
            workflow_sdk.subscribe("t")


if __name__ == "__main__":
    unittest.main()
