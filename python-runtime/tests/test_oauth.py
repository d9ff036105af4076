"""OAuth connections in the SDK: `refresh_oauth` asks the running session (the service), and the
Google credentials and HubSpot helper refresh through it."""

import datetime
import os
import pickle
import unittest
from unittest import mock

from workflow_sdk import connections, seam
from workflow_sdk.errors import AutoKittehError, OAuthRefreshError

from .packages import installed
from .test_connections import on_path


class FakeSession:
    """What the runner's session answers `refresh_oauth` with, counting the calls."""

    def __init__(self, fail=False):
        self.calls, self.fail = [], fail

    def refresh_oauth(self, integration, connection):
        self.calls.append((integration, connection))
        if self.fail:
            raise AutoKittehError('refresh_oauth("g"): Google refused the refresh (invalid_grant)')
        return {"token": f"new-{len(self.calls)}", "expiry": "2999-01-01T00:00:00Z"}


class with_session:
    def __init__(self, session):
        self.session = session

    def __enter__(self):
        self.saved, seam.current = seam.current, self.session
        return self.session

    def __exit__(self, *exc):
        seam.current = self.saved


EXPIRED = {
    "g__auth_type": "oauth",
    "g__oauth_AccessToken": "old",
    "g__oauth_Expiry": "2000-01-01 00:00:00 +0000 UTC",
}


class RefreshTest(unittest.TestCase):
    def test_asks_the_session_and_answers_as_autokitteh(self):
        with mock.patch.dict(os.environ, EXPIRED, clear=True), with_session(FakeSession()) as s:
            token, expiry = connections.refresh_oauth("gmail", "g")
            self.assertEqual(token, "new-1")
            self.assertEqual(expiry, datetime.datetime(2999, 1, 1))
            self.assertEqual(os.environ["g__oauth_AccessToken"], "new-1")
            self.assertEqual(s.calls, [("gmail", "g")])

    def test_a_refusal_is_oauth_refresh_error(self):
        with mock.patch.dict(os.environ, EXPIRED, clear=True), with_session(FakeSession(fail=True)):
            with self.assertRaisesRegex(OAuthRefreshError, "invalid_grant"):
                connections.refresh_oauth("gmail", "g")

    def test_hubspot_refreshes_an_expired_token(self):
        from workflow_sdk.hubspot import _oauth_token

        env = {"h__oauth_AccessToken": "old", "h__oauth_Expiry": "2000-01-01 00:00:00 +0000 UTC"}
        with mock.patch.dict(os.environ, env, clear=True), with_session(FakeSession()) as s:
            self.assertEqual(_oauth_token("h"), "new-1")
            self.assertEqual(s.calls, [("hubspot", "h")])
        env["h__oauth_Expiry"] = "2999-01-01 00:00:00 +0000 UTC"
        with mock.patch.dict(os.environ, env, clear=True), with_session(FakeSession()) as s:
            self.assertEqual(_oauth_token("h"), "old")
            self.assertEqual(s.calls, [])


class GoogleCredentialsTest(unittest.TestCase):
    def test_refresh_through_the_service_survives_pickling(self):
        folder = installed("google-auth", "google.oauth2.credentials")
        with on_path(folder, "google", "cachetools", "pyasn1", "pyasn1_modules", "rsa"):
            from workflow_sdk.google import google_creds

            with mock.patch.dict(os.environ, EXPIRED, clear=True), with_session(FakeSession()) as s:
                creds = google_creds("gmail", "g", ["scope"])
                self.assertEqual(creds.token, "old")
                self.assertTrue(creds.expired)
                # As an activity's argument: pickled, then refreshed where it runs.
                again = pickle.loads(pickle.dumps(creds))
                again.refresh(None)
                self.assertEqual(again.token, "new-1")
                self.assertEqual(s.calls, [("gmail", "g")])


if __name__ == "__main__":
    unittest.main()
