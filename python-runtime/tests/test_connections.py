"""The connection client helpers (autokitteh.github, .slack, .twilio, .linear, …) against stand-in
API servers on loopback, and what each says when a variable or a package is missing."""

import os
import subprocess
import sys
import tomllib
import unittest
import warnings
from unittest import mock

from workflow_sdk import connections
from workflow_sdk.errors import AutoKittehError, ConnectionInitError

from .harness import RUNTIME_DIR, ForkServer
from .packages import installed
from .standin_api import StandIn, service_account_key

STAND_INS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stand_ins")


class on_path:
    """`sys.path` gains `folder` for the block; modules imported from it are forgotten after."""

    def __init__(self, folder, *modules):
        self.folder, self.modules = folder, modules

    def __enter__(self):
        sys.path.insert(0, self.folder)

    def __exit__(self, *exc):
        sys.path.remove(self.folder)
        for name in list(sys.modules):
            if name.partition(".")[0] in self.modules:
                del sys.modules[name]


class MissingTest(unittest.TestCase):
    def test_a_missing_variable_is_named(self):
        from workflow_sdk import (
            anthropic,
            atlassian,
            gemini,
            github,
            google,
            jira,
            linear,
            openai,
            slack,
            twilio,
        )

        cases = [
            (github.github_client, "gh__pat or gh__install_id"),
            (slack.slack_client, "gh__oauth_access_token or gh__private_bot_token"),
            (openai.openai_client, "gh__apiKey or gh__api_key"),
            (anthropic.anthropic_client, "gh__api_key"),
            (gemini.gemini_client, "gh__api_key"),
            (twilio.twilio_client, "gh__Username"),
            (linear.linear_client, "gh__api_key or gh__oauth_access_token"),
            (atlassian.jira_client, "gh__Token or gh__APIKeyOrPAT"),
            (jira.jira_client, "gh__Token or gh__APIKeyOrPAT"),
        ]
        with mock.patch.dict(os.environ, {}, clear=True):
            for helper, named in cases:
                with self.assertRaises(ConnectionInitError, msg=helper.__name__) as cm:
                    helper("gh")
                self.assertEqual(
                    str(cm.exception),
                    f"AutoKitteh connection 'gh' not initialized: set {named} (cli var set --secret)",
                )
                self.assertEqual(cm.exception.connection, "gh")
            # A Google connection names both of its set-ups, OAuth first.
            with self.assertRaises(ConnectionInitError) as cm:
                google.gmail_client("gh")
            self.assertEqual(
                str(cm.exception),
                "AutoKitteh connection 'gh' not initialized: authorize it with OAuth: cli connection "
                "authorize <project>/gh; or set gh__JSON to a service account's JSON key "
                "(cli var set --secret)",
            )

    def test_the_errors_survive_pickle_as_they_were(self):
        # Raised inside an activity of a durable session, they are journaled through pickle.
        import pickle

        from workflow_sdk.errors import ActivityCallError, ConnectionNotSupportedError

        for err in (
            ConnectionInitError("c", "set c__pat"),
            ConnectionNotSupportedError("m.f", "c"),
            ActivityCallError("start"),
        ):
            again = pickle.loads(pickle.dumps(err))
            self.assertEqual((type(again), str(again)), (type(err), str(err)))

    def test_a_bad_connection_name_is_a_value_error(self):
        from workflow_sdk.github import github_client

        with self.assertRaisesRegex(ValueError, r"^Invalid AutoKitteh connection name: 'my-conn'$"):
            github_client("my-conn")

    def test_a_missing_package_is_named_whatever_the_helper(self):
        # -S: no site-packages, so none of the third-party packages can be imported.
        code = (
            "import os\n"
            "from autokitteh.errors import ConnectionInitError\n"
            "from autokitteh import anthropic, github, google, linear, openai, slack, twilio\n"
            "os.environ.update(c__pat='p', c__BotToken='t', c__api_key='k', c__Username='u',\n"
            "                  c__Password='p', c__JSON='{}')\n"
            "for f in (github.github_client, slack.slack_client, openai.openai_client,\n"
            "          anthropic.anthropic_client, twilio.twilio_client, linear.linear_client,\n"
            "          google.google_sheets_client):\n"
            "    try:\n"
            "        f('c')\n"
            "    except ConnectionInitError as e:\n"
            "        print(str(e).split(': ', 1)[1].split(' is not installed')[0])\n"
        )
        out = subprocess.run(
            [sys.executable, "-S", "-c", code],
            env={"PYTHONPATH": RUNTIME_DIR},
            capture_output=True,
            text=True,
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(
            out.stdout.splitlines(),
            [
                f"the Python package {p!r}"
                for p in ("PyGithub", "slack-sdk", "openai", "anthropic", "twilio", "requests", "google-auth")
            ],
        )

    def test_refresh_oauth_outside_a_session_says_it_needs_one(self):
        from workflow_sdk import connections

        # Outside a session there is no service to refresh with.
        with self.assertRaisesRegex(AutoKittehError, "needs a running session"):
            connections.refresh_oauth("slack", "s")


class PreinstalledTest(unittest.TestCase):
    def test_the_all_extra_is_the_preinstalled_list(self):
        with open(os.path.join(RUNTIME_DIR, "pyproject.toml"), "rb") as f:
            extra = tomllib.load(f)["project"]["optional-dependencies"]["all"]
        with open(os.path.join(RUNTIME_DIR, "preinstalled.txt")) as f:
            listed = [line.split("#")[0].strip() for line in f if line.split("#")[0].strip()]
        self.assertEqual(extra, listed)

    def test_the_list_is_autokittehs_all_extra(self):
        # AutoKitteh's py-sdk pyproject.toml (autokitteh 0.8.2), `[project.optional-dependencies] all`,
        # its names in its order; its `~=` pins are left out (docs/python-runtime.md#packages).
        autokitteh_all = """anthropic asana atlassian-python-api auth0-python azure-identity boto3 discord.py
            google-api-python-client google-auth-httplib2 google-auth-oauthlib google-generativeai gspread
            gspread-formatting hubspot-api-client kubernetes msgraph-sdk notion_client openai
            pipedrive-python-lib praw pyairtable PyGithub python-telegram-bot simple-salesforce slack-sdk
            twilio beautifulsoup4 grpcio grpcio-reflection pydantic-ai PyYAML requests requests-toolbelt
            tenacity""".split()
        with open(os.path.join(RUNTIME_DIR, "preinstalled.txt")) as f:
            listed = [line.split("#")[0].strip() for line in f if line.split("#")[0].strip()]
        self.assertEqual(listed, autokitteh_all)

    def test_the_package_ships_py_typed_and_no_stand_in(self):
        import tempfile
        import zipfile

        sys.path.insert(0, os.path.join(RUNTIME_DIR, "_build"))
        try:
            import backend
        finally:
            sys.path.pop(0)
        with tempfile.TemporaryDirectory() as out:
            with zipfile.ZipFile(os.path.join(out, backend.build_wheel(out))) as wheel:
                names = wheel.namelist()
                metadata = wheel.read("workflow_sdk-0.1.0.dist-info/METADATA").decode()
        self.assertIn("workflow_sdk/py.typed", names)
        self.assertIn("autokitteh/py.typed", names)
        self.assertIn("workflow_sdk/github.py", names)
        shipped = ("workflow_sdk/", "autokitteh/", "workflow_sdk-0.1.0.dist-info/")
        self.assertEqual([n for n in names if not n.startswith(shipped)], [])  # no stand-in package
        self.assertIn('Requires-Dist: PyGithub; extra == "all"', metadata.splitlines())


def _github_routes(pat_seen):
    def repo(base, body):
        return 200, {
            "id": 1,
            "name": "r",
            "full_name": "o/r",
            "url": f"{base}/repos/o/r",
            "owner": {"login": "o"},
        }

    def issue(base, body):
        return 200, {"number": 7, "title": "t", "url": f"{base}/repos/o/r/issues/7", "state": "open"}

    def comment(base, body):
        return 201, {
            "id": 99,
            "body": __import__("json").loads(body)["body"],
            "url": f"{base}/repos/o/r/issues/comments/99",
        }

    return {
        ("GET", "/repos/o/r"): repo,
        ("GET", "/repos/o/r/issues/7"): issue,
        ("POST", "/repos/o/r/issues/7/comments"): comment,
    }


class GitHubTest(unittest.TestCase):
    """PyGithub for real (from this machine's package index) against a stand-in GitHub API."""

    @classmethod
    def setUpClass(cls):
        cls.pygithub = installed("PyGithub", "github")

    def test_a_comment_reaches_the_api_with_the_token(self):
        with (
            StandIn(_github_routes(None)) as api,
            on_path(self.pygithub, "github"),
            mock.patch.dict(os.environ, {"gh__pat": "ghp_secret123", "gh__base_url": api.url}),
        ):
            from workflow_sdk.github import github_client

            gh = github_client("gh")
            comment = gh.get_repo("o/r").get_issue(7).create_comment("thanks!")
        self.assertEqual(comment.id, 99)
        self.assertEqual(
            [(r["method"], r["path"]) for r in api.requests],
            [("GET", "/repos/o/r"), ("GET", "/repos/o/r/issues/7"), ("POST", "/repos/o/r/issues/7/comments")],
        )
        for r in api.requests:
            self.assertRegex(r["headers"]["Authorization"], r"^(token|Bearer) ghp_secret123$")
        self.assertEqual(__import__("json").loads(api.requests[2]["body"]), {"body": "thanks!"})

    def test_the_enterprise_url_gets_api_v3_as_autokitteh_does(self):
        env = {"gh__pat": "p", "gh__enterprise_url": "https://ghe.example.com/"}
        with on_path(self.pygithub, "github"), mock.patch.dict(os.environ, env):
            from workflow_sdk.github import github_client

            self.assertEqual(github_client("gh").requester.base_url, "https://ghe.example.com/api/v3")
            os.environ["gh__base_url"] = "http://127.0.0.1:9/gh/"  # Hookline's wins, as is
            self.assertEqual(github_client("gh").requester.base_url, "http://127.0.0.1:9/gh")
            del os.environ["gh__base_url"], os.environ["gh__enterprise_url"]
            self.assertEqual(github_client("gh").requester.base_url, "https://api.github.com")

    def test_in_a_durable_session_the_client_works_across_activities(self):
        server = ForkServer(env={"PYTHONPATH": self.pygithub})
        self.addCleanup(server.close)
        with StandIn(_github_routes(None)) as api:
            handler = """
                from autokitteh.github import github_client

                def on_post(event):
                    repo = github_client("gh").get_repo("o/r")
                    print(repo.get_issue(7).create_comment("from a session").id)
                """
            r = server.run(
                {"handlers.py": handler}, durable=True, env={"gh__pat": "ghp_x", "gh__base_url": api.url}
            )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(r.prints, ["99"])
        self.assertEqual(len(api.requests), 3)
        self.assertGreaterEqual(len([m for m in r.messages if m["type"] == "step"]), 3)


class SlackTest(unittest.TestCase):
    """autokitteh.slack with the stand-in slack_sdk (tests/stand_ins) against a stand-in Slack API."""

    def routes(self):
        def post(base, body):
            return 200, {"ok": True, "ts": "1700000000.000200", "message": __import__("json").loads(body)}

        return {
            ("POST", "/api/auth.test"): (200, {"ok": True, "user_id": "UBOT"}),
            ("POST", "/api/chat.postMessage"): post,
        }

    def test_the_bot_token_is_checked_then_used(self):
        with StandIn(self.routes()) as api, on_path(STAND_INS, "slack_sdk"):
            env = {
                "sl__oauth_access_token": "xoxb-oauth",
                "sl__private_bot_token": "xoxb-private",
                "sl__base_url": api.url + "/api",
            }
            with mock.patch.dict(os.environ, env):
                from workflow_sdk.slack import slack_client

                client = slack_client("sl")
                client.chat_postMessage(channel="C1", text="hi", thread_ts="1.2")
                del os.environ["sl__oauth_access_token"]
                slack_client("sl")
        self.assertEqual(
            [r["path"] for r in api.requests], ["/api/auth.test", "/api/chat.postMessage", "/api/auth.test"]
        )
        self.assertEqual(
            [r["headers"]["Authorization"] for r in api.requests],
            ["Bearer xoxb-oauth", "Bearer xoxb-oauth", "Bearer xoxb-private"],
        )
        self.assertEqual(
            __import__("json").loads(api.requests[1]["body"]),
            {"channel": "C1", "text": "hi", "thread_ts": "1.2"},
        )

    def test_a_refused_token_fails_at_the_helper(self):
        with (
            StandIn({("POST", "/api/auth.test"): (200, {"ok": False, "error": "invalid_auth"})}) as api,
            on_path(STAND_INS, "slack_sdk"),
        ):
            with mock.patch.dict(
                os.environ, {"sl__private_bot_token": "bad", "sl__base_url": api.url + "/api/"}
            ):
                from workflow_sdk.slack import slack_client

                with self.assertRaisesRegex(Exception, "invalid_auth") as cm:
                    slack_client("sl")
        self.assertEqual(type(cm.exception).__name__, "SlackApiError")

    def test_normalize_channel_name(self):
        from autokitteh.slack import normalize_channel_name as n

        self.assertEqual(n("  Q3 'Launch' -- War Room!  "), "q3-launch-war-room")
        self.assertEqual(n("a__b--c"), "a-b-c")
        self.assertEqual(n("x" * 60), "x" * 50)
        self.assertEqual(n("-edge-"), "edge")
        self.assertEqual((n(""), n("''")), ("", ""))


class TokenOnlyTest(unittest.TestCase):
    def test_twilio_goes_to_the_base_url_with_basic_auth(self):
        routes = {("POST", "/2010-04-01/Accounts/AC1/Messages.json"): (201, {"sid": "SM1"})}
        env = {"tw__AccountSID": "AC1", "tw__Username": "SK1", "tw__Password": "pw"}
        with (
            StandIn(routes) as api,
            on_path(STAND_INS, "twilio"),
            mock.patch.dict(os.environ, {**env, "tw__base_url": api.url}),
        ):
            from workflow_sdk.twilio import twilio_client

            sent = twilio_client("tw").messages.create(to="+1555", from_="+1444", body="hi")
        self.assertEqual(sent, {"sid": "SM1"})
        [request] = api.requests
        self.assertEqual(request["headers"]["Authorization"], "Basic U0sxOnB3")  # SK1:pw
        self.assertEqual(request["body"], b"To=%2B1555&From=%2B1444&Body=hi")

    def test_linear_sends_the_api_key_as_is_and_an_oauth_token_as_bearer(self):
        routes = {("POST", "/graphql/"): (200, {"data": {"viewer": {"id": "u1"}}})}
        with StandIn(routes) as api:
            with mock.patch.dict(
                os.environ, {"li__api_key": "lin_api_1", "li__base_url": api.url + "/graphql"}
            ):
                from workflow_sdk.linear import linear_client

                client = linear_client("li")
                a = client.post("https://api.linear.app/graphql", json={"query": "{ viewer { id } }"}).json()
                client.post("", json={"query": "{ viewer { id } }"})
            with mock.patch.dict(
                os.environ, {"li__oauth_access_token": "tok", "li__base_url": api.url + "/graphql/"}
            ):
                linear_client("li").post("", json={})
        self.assertEqual(a, {"data": {"viewer": {"id": "u1"}}})
        self.assertEqual([r["path"] for r in api.requests], ["/graphql/"] * 3)
        self.assertEqual(
            [r["headers"]["Authorization"] for r in api.requests], ["lin_api_1", "lin_api_1", "Bearer tok"]
        )

    def test_openai_and_anthropic_for_real_at_the_base_url(self):
        # The real packages (from this machine's index), each against a stand-in of its API.
        models = {"object": "list", "data": [{"id": "m1", "object": "model", "created": 0, "owned_by": "o"}]}
        claude = {
            "data": [
                {"id": "c1", "type": "model", "display_name": "C", "created_at": "2025-01-01T00:00:00Z"}
            ],
            "has_more": False,
            "first_id": "c1",
            "last_id": "c1",
        }
        routes = {("GET", "/oa/v1/models"): (200, models), ("GET", "/an/v1/models"): (200, claude)}
        # apiKey is the name AutoKitteh's ChatGPT connection saves; it wins over the older api_key.
        env = {"oa__apiKey": "sk-oa", "oa__api_key": "sk-older", "an__api_key": "sk-an"}
        with StandIn(routes) as api, mock.patch.dict(os.environ, env):
            os.environ.update(oa__base_url=api.url + "/oa/v1", an__base_url=api.url + "/an")
            with on_path(installed("openai", "openai"), "openai", "httpx", "pydantic", "anyio"):
                from workflow_sdk.openai import openai_client

                self.assertEqual([m.id for m in openai_client("oa").models.list()], ["m1"])
            with on_path(installed("anthropic", "anthropic"), "anthropic", "httpx", "pydantic", "anyio"):
                from workflow_sdk.anthropic import anthropic_client

                self.assertEqual([m.id for m in anthropic_client("an").models.list()], ["c1"])
        [oa, an] = api.requests
        self.assertEqual((oa["path"], oa["headers"]["Authorization"]), ("/oa/v1/models", "Bearer sk-oa"))
        self.assertEqual((an["path"].split("?")[0], an["headers"]["X-Api-Key"]), ("/an/v1/models", "sk-an"))

    def test_google_sheets_from_a_service_account_key_at_the_base_url(self):
        folder = installed("google-api-python-client", "googleapiclient.discovery")
        modules = (
            "google",
            "googleapiclient",
            "cryptography",
            "httplib2",
            "google_auth_httplib2",
            "pyparsing",
        )
        with on_path(folder, *modules), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # httplib2's use of pyparsing's old names
            routes = {
                ("POST", "/token"): (
                    200,
                    {"access_token": "ya29.test", "expires_in": 3600, "token_type": "Bearer"},
                ),
                ("GET", "/v4/spreadsheets/abc"): (
                    200,
                    {"spreadsheetId": "abc", "properties": {"title": "T"}},
                ),
            }
            with StandIn(routes) as api:
                key = service_account_key(api.url + "/token")
                env = {"gs__JSON": key, "gs__base_url": api.url + "/"}
                with mock.patch.dict(os.environ, env):
                    from workflow_sdk.google import google_sheets_client

                    sheet = google_sheets_client("gs").spreadsheets().get(spreadsheetId="abc").execute()
        self.assertEqual(sheet["properties"]["title"], "T")
        [token, get] = api.requests
        self.assertEqual(token["path"], "/token")
        self.assertIn(b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", token["body"])
        self.assertEqual(
            (get["path"].split("?")[0], get["headers"]["Authorization"]),
            ("/v4/spreadsheets/abc", "Bearer ya29.test"),
        )

    def test_check_connection_name_as_autokitteh(self):
        connections.check_connection_name("_a1")
        for bad in ("", "1a", "a-b", None):
            with self.assertRaises(ValueError):
                connections.check_connection_name(bad)


if __name__ == "__main__":
    unittest.main()


class GitHubAppTest(unittest.TestCase):
    """A GitHub App installation: PyGithub asks for installation tokens with JWTs the service signs."""

    @classmethod
    def setUpClass(cls):
        cls.pygithub = installed("PyGithub", "github")

    def test_the_installation_token_comes_with_a_jwt_the_service_signed(self):
        from workflow_sdk import seam

        asked = []

        class Session:  # the runner's Session as encode_jwt sees it
            def unjournaled_request(self, msg):
                asked.append(msg)
                return "jwt-from-the-service"

        routes = _github_routes(None)
        token = {"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"}
        routes[("POST", "/app/installations/34/access_tokens")] = (201, token)
        env = {"gh__app_id": "12", "gh__install_id": "34"}
        with (
            StandIn(routes) as api,
            on_path(self.pygithub, "github"),
            mock.patch.dict(os.environ, {**env, "gh__base_url": api.url}),
            mock.patch.object(seam, "current", Session()),
        ):
            from workflow_sdk.github import github_client

            self.assertEqual(github_client("gh").get_repo("o/r").full_name, "o/r")
        paths = [(r["method"], r["path"], r["headers"]["Authorization"]) for r in api.requests]
        self.assertEqual(
            paths,
            [
                ("POST", "/app/installations/34/access_tokens", "Bearer jwt-from-the-service"),
                ("GET", "/repos/o/r", "token ghs_installation"),
            ],
        )
        [msg] = asked
        self.assertEqual((msg["type"], msg["connection"], msg["algorithm"]), ("encode_jwt", "gh", "RS256"))
        claims = msg["payload"]
        self.assertEqual(claims["iss"], 12)
        self.assertTrue(claims["iat"] < claims["exp"] <= claims["iat"] + 660)

    def test_the_client_pickles_and_its_copy_still_asks_the_service(self):
        # A durable session's activity results hold the client's auth: it pickles by reference.
        import pickle

        from workflow_sdk import seam

        asked = []

        class Session:
            def unjournaled_request(self, msg):
                asked.append(msg["connection"])
                return "jwt"

        env = {"gh__app_id": "12", "gh__install_id": "34", "gh__base_url": "http://127.0.0.1:9"}
        with (
            on_path(self.pygithub, "github"),
            mock.patch.dict(os.environ, env),
            mock.patch.object(seam, "current", Session()),
        ):
            from workflow_sdk.github import github_client

            copy = pickle.loads(pickle.dumps(github_client("gh")))
            auth = copy.requester.auth._AppInstallationAuth__integration.auth
            self.assertEqual((auth.create_jwt(), asked), ("jwt", ["gh"]))

    def test_what_a_half_set_connection_and_a_call_outside_a_session_say(self):
        from workflow_sdk.github import github_client

        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaisesRegex(ConnectionInitError, "set gh__pat or gh__install_id"):
                github_client("gh")
        with on_path(self.pygithub, "github"), mock.patch.dict(os.environ, {"gh__app_id": "1"}, clear=True):
            with self.assertRaisesRegex(ConnectionInitError, "set gh__install_id"):
                github_client("gh")
            os.environ.update(gh__install_id="34", gh__enterprise_url="https://ghe.example.com/")
            self.assertEqual(github_client("gh").requester.base_url, "https://ghe.example.com/api/v3")
            os.environ["gh__base_url"] = "http://127.0.0.1:9/gh/"  # Hookline's wins, as is
            self.assertEqual(github_client("gh").requester.base_url, "http://127.0.0.1:9/gh")
            os.environ["gh__install_id"] = "x9"
            with self.assertRaisesRegex(ValueError, "gh__install_id is not a GitHub id"):
                github_client("gh")
        with self.assertRaisesRegex(AutoKittehError, "needs a running Hookline session"):
            connections.encode_jwt({"iss": 1}, "gh", "RS256")
        with self.assertRaisesRegex(ValueError, "payload must be a dict"):
            connections.encode_jwt({"iss": 1.5}, "gh", "RS256")
