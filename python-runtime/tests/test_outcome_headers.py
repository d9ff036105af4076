"""http_outcome refuses anything that would not be a well-formed HTTP response, at the call."""

import unittest

from workflow_sdk import http_outcome


class OutcomeHeaderTest(unittest.TestCase):
    def test_refuses_malformed_headers_and_statuses(self):
        for args in [
            (200, {"X-A": "a\rb"}),
            (200, {"X-A": "a\nb"}),
            (200, {"X-A": "a\x00b"}),
            (200, {"X-A": "a\x7fb"}),
            (200, {"X-A": "\u2603"}),
            (200, {"X A": "a"}),
            (200, {"X-A:": "a"}),
            (200, {"": "a"}),
            (200, {"X-A": None}),
            (200, {"X-A": b"bytes"}),
            (200, {b"X-A": "a"}),
            (200, {"X-A": ["a"]}),
            (99,),
            (600,),
            (-1,),
            (200.0,),
            (None,),
        ]:
            with self.subTest(args=args), self.assertRaises(ValueError):
                http_outcome(*args)

    def test_accepts_tabs_latin1_and_token_punctuation(self):
        import io
        from contextlib import redirect_stderr

        with redirect_stderr(io.StringIO()):
            self.assertIsNone(http_outcome(200, {"X-Weird_Name.v1~": "a\tb caf\u00e9"}))


if __name__ == "__main__":
    unittest.main()
