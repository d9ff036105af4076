"""workflow_sdk.testing.event: the same Event the service builds (src/events/data.ts)."""

import base64
import unittest

import workflow_sdk
from workflow_sdk import testing
from workflow_sdk.event import Headers, event_from_wire
from workflow_sdk.testing.events import to_wire

PREFIX = f"/webhooks/{testing.WEBHOOK_ID}"


class EventShapeTest(unittest.TestCase):
    def test_every_field_of_a_post(self):
        e = testing.event(
            "post",
            "/a/b?x=1&x=2",
            headers=[("x-hub-signature-256", "sha256=ab"), ("X-Tag", "a"), ("x-tag", " b ")],
            body='{"n":1}',
        )
        self.assertIsInstance(e, workflow_sdk.Event)
        self.assertEqual(set(e), {"event_id", "session_id", "event_type", "data"})
        self.assertTrue(e.event_id.startswith("evt_") and len(e.event_id) == 30)
        self.assertIsNone(e.session_id)
        self.assertEqual(e.event_type, "post")
        d = e.data
        self.assertEqual(d.method, "POST")
        self.assertEqual(d.raw_url, f"{PREFIX}/a/b?x=1&x=2")
        self.assertEqual(d.url, {"path": f"{PREFIX}/a/b", "query": {"x": "1, 2"}, "path_suffix": "a/b"})
        self.assertIsInstance(d.headers, Headers)
        self.assertEqual(d.headers, {"X-Hub-Signature-256": "sha256=ab", "X-Tag": "a, b"})
        self.assertEqual(d.headers["x-hub-SIGNATURE-256"], "sha256=ab")
        self.assertEqual(d.body, {"bytes": b'{"n":1}', "text": '{"n":1}', "json": {"n": 1}, "form": None})
        self.assertEqual(e.body.text, '{"n":1}')  # AutoKitteh spelling

    def test_defaults_are_an_empty_post_to_the_webhook_url(self):
        d = testing.event().data
        self.assertEqual((d.method, d.raw_url, d.url.path_suffix, d.url.query), ("POST", PREFIX, "", {}))
        self.assertEqual(d.headers, {})
        self.assertEqual(d.body, {"bytes": b"", "text": "", "json": None, "form": None})

    def test_matches_the_wire_shape_the_runner_decodes(self):
        e = testing.event(body=b"\x00\xff")
        wire = to_wire(e)
        self.assertEqual(wire["data"]["body"]["bytes"], base64.b64encode(b"\x00\xff").decode())
        self.assertEqual(event_from_wire(wire), e)

    def test_json_sets_content_type_unless_given(self):
        e = testing.event(json={"a": [1, "é"]})
        self.assertEqual(e.data.headers["content-type"], "application/json")
        self.assertEqual(e.data.body.bytes, '{"a":[1,"é"]}'.encode())
        e = testing.event(json=[1], headers={"Content-Type": "application/vnd.x+json"})
        self.assertEqual(e.data.headers["Content-Type"], "application/vnd.x+json")

    def test_json_whatever_the_content_type(self):
        e = testing.event(body='{"a":1}', headers={"content-type": "application/x-www-form-urlencoded"})
        self.assertEqual(e.data.body.json, {"a": 1})
        self.assertEqual(e.data.body.form, {'{"a":1}': ""})
        self.assertEqual(testing.event(body="  null ").data.body.json, None)
        self.assertEqual(testing.event(body="not json").data.body.json, None)
        self.assertEqual(testing.event(body="NaN").data.body.json, None)

    def test_json_numbers_are_doubles_as_in_the_service(self):
        j = testing.event(
            body='{"f": 1.0, "big": 12345678901234567890, "inf": 1e400, "x": 0.5}'
        ).data.body.json
        self.assertEqual(j, {"f": 1, "big": 12345678901234567000, "inf": None, "x": 0.5})
        self.assertIsInstance(j["f"], int)

    def test_form_only_for_urlencoded_bodies(self):
        form = "application/x-www-form-urlencoded; charset=utf-8"
        e = testing.event(body="?name=Ada&tag=a&tag=b&sp=x+y&bad=%zz&flag", headers={"Content-Type": form})
        self.assertEqual(
            e.data.body.form, {"name": "Ada", "tag": "a, b", "sp": "x y", "bad": "%zz", "flag": ""}
        )
        self.assertIsNone(testing.event(body="a=1", headers={"Content-Type": "text/plain"}).data.body.form)
        self.assertIsNone(testing.event(body=b"a=\xff", headers={"Content-Type": form}).data.body.form)

    def test_text_is_none_for_invalid_utf8_and_a_bom_is_dropped(self):
        self.assertIsNone(testing.event(body=b"\xff\xfe").data.body.text)
        self.assertEqual(testing.event(body=b"\xef\xbb\xbf[1]").data.body.text, "[1]")

    def test_query_forms_and_encoding(self):
        e = testing.event("GET", "/s?q=a b", query={"tag": ["x", "y"], "n": 1})
        self.assertEqual(e.data.url.query, {"q": "a b", "tag": "x, y", "n": "1"})
        self.assertEqual(e.data.raw_url, f"{PREFIX}/s?q=a%20b&tag=x&tag=y&n=1")
        self.assertEqual(testing.event("GET", query="?a=1&a=2").data.url.query, {"a": "1, 2"})
        self.assertEqual(testing.event("GET", query=[("k", "v")]).data.url.query, {"k": "v"})
        self.assertEqual(testing.event("GET", "/é x").data.url.path_suffix, "%C3%A9%20x")

    def test_a_full_webhooks_path(self):
        d = testing.event(path="/webhooks/abc/orders/7").data
        self.assertEqual((d.url.path, d.url.path_suffix), ("/webhooks/abc/orders/7", "orders/7"))
        self.assertEqual(testing.event(webhook_id="zz").data.url.path, "/webhooks/zz")

    def test_path_suffix_drops_only_the_separating_slash(self):
        suffix = {p: testing.event("GET", p).data.url.path_suffix for p in ("", "/", "/new", "/a/", "//x")}
        self.assertEqual(suffix, {"": "", "/": "", "/new": "new", "/a/": "a/", "//x": "/x"})

    def test_ids_can_be_given(self):
        e = testing.event(event_id="evt_1", session_id="ses_1")
        self.assertEqual((e.event_id, e.session_id), ("evt_1", "ses_1"))


class EventRefusalsTest(unittest.TestCase):
    def test_bad_arguments_raise_value_error(self):
        cases = [
            dict(body="x", json={}),
            dict(method="GET", body="x"),
            dict(method="HEAD", json={}),
            dict(method="BAD METHOD"),
            dict(path="relative"),
            dict(body=42),
            dict(headers={"Bad Name": "x"}),
            dict(headers={"X-A": "1\r\nX-B: 2"}),
            dict(headers={"X-A": 3}),
        ]
        for kwargs in cases:
            with self.subTest(kwargs=kwargs), self.assertRaises(ValueError):
                testing.event(**kwargs)


if __name__ == "__main__":
    unittest.main()
