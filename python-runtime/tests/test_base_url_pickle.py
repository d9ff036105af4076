"""The client helpers' `<connection>__base_url` wrappers pickle and unpickle like the real clients
(a durable session journals an activity's result through pickle), and the copy still calls the
base URL. The stand-in packages stand for the ones this machine's index lacks (stand_ins/README.md)."""

import os
import pickle
import subprocess
import sys
import unittest
from unittest import mock

from .harness import RUNTIME_DIR
from .packages import installed
from .standin_api import StandIn
from .test_connections import STAND_INS, on_path


def round_trip(value):
    return pickle.loads(pickle.dumps(value))


class BaseUrlPickleTest(unittest.TestCase):
    def test_twilio_client_at_the_base_url(self):
        routes = {("POST", "/2010-04-01/Accounts/AC1/Messages.json"): (201, {"sid": "SM1"})}
        env = {"tw__AccountSID": "AC1", "tw__Username": "SK1", "tw__Password": "pw"}
        with (
            StandIn(routes) as api,
            on_path(STAND_INS, "twilio"),
            mock.patch.dict(os.environ, {**env, "tw__base_url": api.url}),
        ):
            from workflow_sdk.twilio import twilio_client

            copy = round_trip(twilio_client("tw"))
            # The wrapper itself, alone: what `messages.create` pickles with its client.
            round_trip(copy.http_client)
            sent = copy.messages.create(to="+1555", from_="+1444", body="hi")
        self.assertEqual(sent, {"sid": "SM1"})
        self.assertEqual([r["path"] for r in api.requests], ["/2010-04-01/Accounts/AC1/Messages.json"])

    def test_twilio_wrapper_says_what_it_lacks_without_recursing(self):
        with on_path(STAND_INS, "twilio"):
            from workflow_sdk.twilio import _Redirected

            bare = _Redirected.__new__(_Redirected)  # as pickle makes it, before its state
            with self.assertRaises(AttributeError):
                bare.request_hooks  # noqa: B018

    def test_linear_client(self):
        routes = {("POST", "/graphql/"): (200, {"data": {"viewer": {"id": "u1"}}})}
        with (
            StandIn(routes) as api,
            mock.patch.dict(os.environ, {"li__api_key": "lin_api_1", "li__base_url": api.url + "/graphql"}),
        ):
            from workflow_sdk.linear import linear_client

            copy = round_trip(linear_client("li"))
            answer = copy.post("", json={"query": "{ viewer { id } }"}).json()
            data = pickle.dumps(copy)
        self.assertEqual(answer, {"data": {"viewer": {"id": "u1"}}})
        # A process that has made no Linear client yet (a resumed session) loads it too.
        load = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()).base_url)"
        env = {**os.environ, "PYTHONPATH": RUNTIME_DIR}
        out = subprocess.run([sys.executable, "-c", load], input=data, capture_output=True, env=env)
        self.assertEqual(out.stdout.decode().strip(), api.url + "/graphql/", out.stderr.decode())
        [request] = api.requests
        self.assertEqual((request["path"], request["headers"]["Authorization"]), ("/graphql/", "lin_api_1"))

    def test_the_requests_redirect_of_gspread(self):
        import requests

        from workflow_sdk.redirect import redirect

        routes = {("GET", "/v4/spreadsheets/abc"): (200, {"spreadsheetId": "abc"})}
        with StandIn(routes) as api:
            session = redirect(requests.Session(), api.url, ("sheets.googleapis.com",))
            copy = round_trip(session)
            answer = copy.get("https://sheets.googleapis.com/v4/spreadsheets/abc").json()
        self.assertEqual(answer, {"spreadsheetId": "abc"})

    def test_oauth2_session_of_zoom(self):
        routes = {("GET", "/v2/users/me"): (200, {"id": "z1"})}
        with (
            StandIn(routes) as api,
            on_path(installed("requests-toolbelt", "requests_toolbelt"), "requests_toolbelt"),
            mock.patch.dict(os.environ, {"zm__oauth_access_token": "zt", "zm__base_url": api.url + "/v2"}),
        ):
            from workflow_sdk.zoom import zoom_client

            copy = round_trip(zoom_client("zm"))
            me = copy.get("users/me").json()
        self.assertEqual(me, {"id": "z1"})
        [request] = api.requests
        self.assertEqual(request["headers"]["Authorization"], "Bearer zt")
