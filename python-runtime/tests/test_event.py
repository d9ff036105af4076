import io
import pickle
import unittest
from contextlib import redirect_stderr

import autokitteh
import workflow_sdk
from workflow_sdk import AttrDict, Event, http_outcome
from workflow_sdk.event import Headers, event_from_wire

from .harness import make_event


class EventTest(unittest.TestCase):
    def setUp(self):
        self.event = event_from_wire(
            make_event(body=b'{"user": {"name": "ann"}}', headers={"X-Hub-Signature-256": "sha256=ab"})
        )

    def test_attribute_and_item_reads_agree(self):
        e = self.event
        self.assertEqual(e.data.body.text, e["data"]["body"]["text"])
        self.assertEqual(e.data.body.json.user.name, "ann")
        self.assertEqual(e.data.url.path, "/webhooks/x/a")
        self.assertEqual(e.session_id, "ses_test")
        self.assertEqual(e.event_type, "post")
        self.assertIsInstance(e, dict)

    def test_body_bytes_are_decoded_from_base64(self):
        self.assertEqual(self.event.data.body.bytes, b'{"user": {"name": "ann"}}')
        self.assertIsInstance(self.event.data.body.bytes, bytes)

    def test_empty_body(self):
        e = event_from_wire(make_event(body=b""))
        self.assertEqual(e.data.body.bytes, b"")
        self.assertEqual(e.data.body.text, "")

    def test_attribute_assignment_raises_item_assignment_works(self):
        with self.assertRaises(AttributeError):
            self.event.data.user = "x"
        with self.assertRaises(AttributeError):
            self.event.foo = 1
        self.event.data["user"] = {"id": 7}
        self.assertEqual(self.event.data.user.id, 7)
        self.event["data"]["body"]["text"] = "changed"
        self.assertEqual(self.event.data.body.text, "changed")

    def test_missing_attribute(self):
        with self.assertRaises(AttributeError):
            _ = self.event.data.nothing
        self.assertIsNone(self.event.data.get("nothing"))

    def test_headers_case_insensitive(self):
        h = self.event.data.headers
        self.assertIsInstance(h, Headers)
        self.assertEqual(h.get("x-hub-signature-256"), "sha256=ab")
        self.assertEqual(h["X-HUB-SIGNATURE-256"], "sha256=ab")
        self.assertEqual(h.get("missing", "d"), "d")
        self.assertIn("x-hub-signature-256", h)
        self.assertEqual(list(h), ["X-Hub-Signature-256"])

    def test_event_falls_back_to_data_keys(self):
        self.assertEqual(self.event.body.text, self.event.data.body.text)
        self.assertEqual(self.event["body"]["text"], self.event.data.body.text)
        self.assertIsNone(self.event.get("nope"))
        with self.assertRaises(KeyError):
            self.event["nope"]

    def test_pickles(self):
        again = pickle.loads(pickle.dumps(self.event))
        self.assertEqual(again, self.event)
        self.assertIsInstance(again, Event)
        self.assertEqual(again.data.headers.get("x-hub-signature-256"), "sha256=ab")

    def test_attrdict_builds_event_like_objects(self):
        e = AttrDict({"data": {"body": {"text": "hi"}, "items": [{"a": 1}]}, "session_id": None})
        self.assertEqual(e.data.body.text, "hi")
        self.assertEqual(e.data["items"][0].a, 1)
        with self.assertRaises(AttributeError):
            e.data = {}

    def test_json_encoded_data_is_taken_as_it_is(self):
        # A manual run's inputs: a "body" or "headers" key is the user's, not a webhook's.
        inputs = {"body": {"bytes": "aGk="}, "headers": {"A": "1"}, "n": 3}
        e = event_from_wire(
            {"event_id": "evt_1", "event_type": "manual", "data": inputs, "data_encoding": "json"}
        )
        self.assertEqual(e.data, inputs)
        self.assertEqual(e.data.body.bytes, "aGk=")
        self.assertNotIn("data_encoding", e)

    def test_autokitteh_alias(self):
        self.assertIs(autokitteh.AttrDict, workflow_sdk.AttrDict)
        self.assertIs(autokitteh.activity, workflow_sdk.activity)
        self.assertEqual(sorted(autokitteh.__all__), sorted(workflow_sdk.__all__))


class OutcomeValidationTest(unittest.TestCase):
    def outcome(self, *args, **kwargs):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertIsNone(http_outcome(*args, **kwargs))
        return err.getvalue()

    def test_outside_a_session_it_prints(self):
        self.assertIn("201", self.outcome(201, json={"a": 1}))
        self.assertIn("hello", self.outcome(200, "hello"))  # body in the headers position
        self.assertIn("bytes", self.outcome(200, b"bytes"))

    def test_invalid_calls_raise_value_error(self):
        for args, kwargs in [
            ((99,), {}),
            ((600,), {}),
            ((True,), {}),
            (("200",), {}),
            ((200,), {"body": "x", "json": {}}),
            ((200, {"X-A": 1}), {}),
            ((200, {1: "a"}), {}),
            ((200, {"X-A": "a\r\nX-B: b"}), {}),
            ((200, {"X-A\n": "a"}), {}),
        ]:
            with self.subTest(args=args, kwargs=kwargs), self.assertRaises(ValueError):
                http_outcome(*args, **kwargs)


if __name__ == "__main__":
    unittest.main()
