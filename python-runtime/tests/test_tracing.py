"""workflow_sdk.trace_headers: the session's TRACEPARENT as headers, or nothing."""

import os
import unittest
from unittest import mock

import workflow_sdk

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class TraceHeaders(unittest.TestCase):
    def test_carries_the_session_traceparent(self):
        with mock.patch.dict(os.environ, {"TRACEPARENT": TP}, clear=False):
            os.environ.pop("TRACESTATE", None)
            self.assertEqual(workflow_sdk.trace_headers(), {"traceparent": TP})

    def test_tracestate_goes_along(self):
        with mock.patch.dict(os.environ, {"TRACEPARENT": TP, "TRACESTATE": "k=v"}):
            self.assertEqual(workflow_sdk.trace_headers(), {"traceparent": TP, "tracestate": "k=v"})

    def test_empty_without_tracing(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("TRACEPARENT", None)
            self.assertEqual(workflow_sdk.trace_headers(), {})

    def test_malformed_or_zero_ids_give_nothing(self):
        for bad in ("garbage", "00-" + "0" * 32 + "-00f067aa0ba902b7-01", TP[:-1], "01" + TP[2:]):
            with mock.patch.dict(os.environ, {"TRACEPARENT": bad}):
                self.assertEqual(workflow_sdk.trace_headers(), {}, bad)

    def test_a_new_dict_each_call(self):
        with mock.patch.dict(os.environ, {"TRACEPARENT": TP}):
            first = workflow_sdk.trace_headers()
            first["x"] = "1"
            self.assertNotIn("x", workflow_sdk.trace_headers())

    def test_exported_under_both_names(self):
        import autokitteh

        self.assertIs(autokitteh.trace_headers, workflow_sdk.trace_headers)
        self.assertIn("trace_headers", workflow_sdk.__all__)


if __name__ == "__main__":
    unittest.main()
