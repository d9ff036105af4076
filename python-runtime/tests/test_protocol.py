"""The runner's checks against the protocol's one definition and the fixtures the service's tests load too."""

import copy
import json
import os
import sys
import tempfile
import unittest
import zipfile

from workflow_sdk.errors import ProtocolError
from workflow_sdk.runner import protocol, schema

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
with open(os.path.join(HERE, "fixtures", "protocol.json"), encoding="utf-8") as f:
    FIXTURES = json.load(f)


def line_of(case):
    return case["line"].encode() if "line" in case else json.dumps(case["message"]).encode()


def runner_check(line):
    """What the runner does with a line from the service: the start check first, then the others."""
    msg = protocol.decode(line)
    return protocol.check_start(msg) if msg["type"] == "start" else protocol.check_incoming(msg)


def schema_check(line, direction):
    try:
        msg = json.loads(line)
    except ValueError:
        raise ProtocolError("not JSON") from None
    return schema.validate(msg, direction)


class FixtureTest(unittest.TestCase):
    def test_valid_messages_pass_the_schema_and_the_runner(self):
        for case in FIXTURES["valid"]:
            with self.subTest(case["message"]):
                checked = schema_check(line_of(case), case["direction"])
                if case["direction"] == "to_child":
                    checked = runner_check(line_of(case))
                for key, value in case.get("filled", {}).items():
                    self.assertEqual(checked[key], value, key)

    def test_invalid_messages_are_refused_by_the_schema_and_the_runner(self):
        for case in FIXTURES["invalid"]:
            with self.subTest(case["why"]):
                with self.assertRaises(ProtocolError):
                    schema_check(line_of(case), case["direction"])
                if case["direction"] == "to_child":
                    with self.assertRaises(ProtocolError):
                        runner_check(line_of(case))

    def test_fixtures_cover_every_message_type(self):
        valid = {(c["direction"], c["message"]["type"]) for c in FIXTURES["valid"]}
        defined = {(m["direction"], name) for name, m in schema.SPEC["messages"].items()}
        self.assertEqual(valid, defined)

    def start(self, **members):
        first = next(c["message"] for c in FIXTURES["valid"] if c["message"]["type"] == "start")
        return {**copy.deepcopy(first), **members}

    def test_a_second_start_is_refused(self):
        start = self.start()
        with self.assertRaisesRegex(ProtocolError, "unknown message type 'start'"):
            protocol.check_incoming(start)

    def test_errors_name_the_message_and_the_member(self):
        with self.assertRaisesRegex(ProtocolError, "^start message: project_dir must be absolute path$"):
            protocol.check_start(self.start(project_dir="p"))
        with self.assertRaisesRegex(ProtocolError, "^start message: entry must be <file.py>:<function>$"):
            protocol.check_start(self.start(entry="h.py"))
        with self.assertRaisesRegex(ProtocolError, "^reply message: error is required when ok is false$"):
            protocol.check_incoming({"type": "reply", "req": 1, "ok": False})
        with self.assertRaisesRegex(
            ProtocolError, r"^start message: journal\[0\]\.kind must be one of activity, "
        ):
            protocol.check_start(self.start(journal=[{"seq": 0, "kind": "x"}]))


class PackageTest(unittest.TestCase):
    def test_the_wheel_ships_the_schema(self):
        sys.path.insert(0, os.path.join(ROOT, "_build"))
        try:
            import backend
        finally:
            sys.path.pop(0)
        with tempfile.TemporaryDirectory() as out:
            name = backend.build_wheel(out)
            with zipfile.ZipFile(os.path.join(out, name)) as wheel:
                shipped = json.loads(wheel.read("workflow_sdk/runner/protocol.json"))
        self.assertEqual(shipped, schema.SPEC)


if __name__ == "__main__":
    unittest.main()
