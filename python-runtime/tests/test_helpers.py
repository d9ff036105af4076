"""The client helpers of AutoKitteh's other integrations (aws, discord, hubspot, auth0, asana,
notion, pipedrive, reddit, telegram, zoom, google's gemini/gspread/youtube), each against a
stand-in API on loopback: with the real package where this machine's index has it (boto3,
gspread, google-api-python-client, requests-toolbelt), else with the minimal stand-in package
in tests/stand_ins. What each reads, what it says when a variable is missing, and what an OAuth
set-up says."""

import asyncio
import json
import os
import unittest
import warnings
from unittest import mock

from workflow_sdk.errors import ConnectionInitError

from .packages import installed
from .standin_api import StandIn, service_account_key
from .test_connections import STAND_INS, on_path

# Every helper AutoKitteh's SDK exports, by module, as `autokitteh.<module>.<name>`.
HELPERS = {
    "anthropic": ["anthropic_client", "anthropic_pydantic_ai_provider"],
    "asana": ["asana_client"],
    "atlassian": ["confluence_client", "get_base_url", "jira_client"],
    "auth0": ["auth0_client"],
    "confluence": ["confluence_client", "get_base_url"],
    "aws": ["boto3_client"],
    "connections": ["check_connection_name", "encode_jwt", "refresh_oauth"],
    "discord": ["bot_token", "discord_client"],
    "github": ["github_client"],
    "google": [
        "gemini_client",
        "gmail_client",
        "google_calendar_client",
        "google_creds",
        "google_drive_client",
        "google_forms_client",
        "google_id",
        "google_pydantic_ai_provider",
        "google_sheets_client",
        "gspread_client",
        "youtube_client",
    ],
    "hubspot": ["hubspot_client"],
    "linear": ["linear_client"],
    "microsoft": ["teams_client"],
    "notion": ["notion_client"],
    "openai": ["openai_client", "openai_pydantic_ai_provider"],
    "pipedrive": ["pipedrive_client"],
    "reddit": ["reddit_client"],
    "slack": ["normalize_channel_name", "slack_client"],
    "telegram": ["telegram_client"],
    "twilio": ["twilio_client"],
    "zoom": ["zoom_client"],
}

AUTHORIZE = "it uses OAuth; authorize it with: cli connection authorize <project>/{}"


def env(**values):
    """Exactly these environment variables for the block."""
    return mock.patch.dict(os.environ, values, clear=True)


class ImportPathsTest(unittest.TestCase):
    def test_every_helper_under_both_names(self):
        import importlib

        from workflow_sdk.integrations import IntegrationModule

        for module, names in HELPERS.items():
            ours = importlib.import_module(f"workflow_sdk.{module}")
            theirs = importlib.import_module(f"autokitteh.{module}")
            self.assertIs(ours, theirs)
            self.assertNotIsInstance(ours, IntegrationModule, module)  # a real module, not a placeholder
            for name in names:
                self.assertTrue(callable(getattr(ours, name)), f"{module}.{name}")
        from autokitteh.gemini import gemini_client  # AutoKitteh's older place for it

        self.assertIs(gemini_client, importlib.import_module("workflow_sdk.google").gemini_client)


class MissingTest(unittest.TestCase):
    def assertInitError(self, call, text, connection="c"):
        with self.assertRaises(ConnectionInitError) as cm:
            call()
        self.assertEqual(str(cm.exception), f"AutoKitteh connection {connection!r} not initialized: {text}")
        self.assertEqual(cm.exception.connection, connection)

    def test_a_missing_variable_is_named(self):
        from autokitteh import (
            asana,
            auth0,
            aws,
            discord,
            google,
            hubspot,
            notion,
            openai,
            pipedrive,
            reddit,
            telegram,
        )

        cases = [
            (lambda: aws.boto3_client("c", "s3"), "set c__AccessKeyID"),
            (lambda: discord.discord_client("c"), "set c__BotToken"),
            (lambda: discord.bot_token("c"), "set c__BotToken"),
            (lambda: asana.asana_client("c"), "set c__pat"),
            (lambda: notion.notion_client("c"), "set c__api_key or c__oauth_access_token"),
            (lambda: pipedrive.pipedrive_client("c"), "set c__api_key"),
            (lambda: reddit.reddit_client("c"), "set c__client_id"),
            (lambda: telegram.telegram_client("c"), "set c__BotToken"),
            (lambda: auth0.auth0_client("c"), "set c__auth0_domain"),
            (lambda: google.gemini_client("c"), "set c__api_key"),
            (lambda: openai.openai_client("c"), "set c__apiKey or c__api_key"),
        ]
        with env():
            for call, named in cases:
                self.assertInitError(call, f"{named} (cli var set --secret)")
            for call in (lambda: google.gspread_client("c"), lambda: google.youtube_client("c")):
                self.assertInitError(
                    call,
                    "authorize it with OAuth: cli connection authorize <project>/c; "
                    "or set c__JSON to a service account's JSON key (cli var set --secret)",
                )
        with env(c__auth0_domain="x.auth0.com"):
            self.assertInitError(
                lambda: auth0.auth0_client("c"), "set c__oauth_AccessToken (cli var set --secret)"
            )
        with env(c__api_key="k"):
            self.assertInitError(
                lambda: pipedrive.pipedrive_client("c"), "set c__company_domain (cli var set --secret)"
            )
        with env():
            self.assertInitError(
                lambda: hubspot.hubspot_client("c"),
                "set c__private_app_token (cli var set --secret), or authorize the connection: "
                "cli connection authorize <project>/c",
            )

    def test_oauth_set_ups_name_the_authorize_command(self):
        from autokitteh import asana, auth0, google, hubspot, notion

        cases = [
            ({"c__auth_type": "oauth", "c__JSON": "{}"}, lambda: google.gmail_client("c")),
            ({"c__auth_type": "oauth"}, lambda: google.gspread_client("c")),
            ({"c__auth_type": "oauth"}, lambda: google.google_creds("youtube", "c", [])),
            ({"c__oauth_RefreshToken": "r"}, lambda: hubspot.hubspot_client("c")),
            ({"c__auth_type": "oauth"}, lambda: hubspot.hubspot_client("c")),
            ({"c__auth0_domain": "x", "c__client_id": "i"}, lambda: auth0.auth0_client("c")),
            ({"c__auth_type": "oauthDefault"}, lambda: asana.asana_client("c")),
            ({"c__auth_type": "oauthPrivate"}, lambda: notion.notion_client("c")),
        ]
        for values, call in cases:
            with self.subTest(values), env(**values):
                self.assertInitError(call, AUTHORIZE.format("c") + " " + _OR_TOKEN)

    def test_the_authorize_command_names_the_sessions_project(self):
        from autokitteh import google, hubspot

        cases = [
            (lambda: google.gmail_client("gmail_conn"), "gmail_conn"),
            (lambda: google.gspread_client("sheets"), "sheets"),
            (lambda: hubspot.hubspot_client("crm"), "crm"),
        ]
        values = {"HOOKLINE_PROJECT": "mailbox", "gmail_conn__auth_type": "oauth"}
        for call, connection in cases:
            with self.subTest(connection), env(**values), self.assertRaises(ConnectionInitError) as cm:
                call()
            self.assertIn(f"cli connection authorize mailbox/{connection}", str(cm.exception))
            self.assertNotIn("<project>", str(cm.exception))

    def test_the_pydantic_ai_providers_say_they_are_not_supported(self):
        from autokitteh import anthropic, google, openai
        from autokitteh.errors import ConnectionNotSupportedError

        for module in (openai, anthropic, google):
            name = f"{module.__name__.split('.')[-1]}_pydantic_ai_provider"
            with self.assertRaisesRegex(
                ConnectionNotSupportedError, f"^autokitteh.[a-z]+.{name}..c..: this "
            ):
                getattr(module, name)("c")

    def test_a_bad_connection_name_is_a_value_error(self):
        from autokitteh import aws, discord, google, reddit

        for call in (
            lambda: aws.boto3_client("a-b", "s3"),
            lambda: discord.bot_token("a b"),
            lambda: google.gspread_client("1x"),
            lambda: reddit.reddit_client(""),
        ):
            with self.assertRaisesRegex(ValueError, "^Invalid AutoKitteh connection name"):
                call()
        with env(c__AccessKeyID="a", c__SecretKey="s"), self.assertRaisesRegex(ValueError, "service name"):
            aws.boto3_client("c", "")


_OR_TOKEN = "(or set it up with a token instead: docs/connection-clients.md)"


class StandInPackageTest(unittest.TestCase):
    """Helpers whose package this machine's index lacks: the stand-in package, real HTTP."""

    def run_with(self, routes, values, *modules):
        """A context: the stand-in API, the stand-in packages, `values` (with `{url}` filled in)."""
        api = StandIn(routes)
        filled = {k: v.replace("{url}", api.url) for k, v in values.items()}
        stack = [api, on_path(STAND_INS, *modules, "standin_http"), env(**filled)]

        class Both:
            def __enter__(self_inner):
                for c in stack:
                    c.__enter__()
                return api

            def __exit__(self_inner, *exc):
                for c in reversed(stack):
                    c.__exit__(*exc)

        return Both()

    def test_hubspot_with_a_private_app_token_at_the_base_url(self):
        routes = {("GET", "/crm/v3/objects/contacts"): (200, {"results": [{"id": "1"}]})}
        with self.run_with(
            routes, {"hs__private_app_token": "pat-na1-x", "hs__base_url": "{url}/"}, "hubspot"
        ) as api:
            from autokitteh.hubspot import hubspot_client

            page = hubspot_client("hs").crm.contacts.basic_api.get_page(limit=5)
        self.assertEqual(page, {"results": [{"id": "1"}]})
        [r] = api.requests
        self.assertEqual(
            (r["path"], r["headers"]["Authorization"]),
            ("/crm/v3/objects/contacts?limit=5", "Bearer pat-na1-x"),
        )

    def test_auth0_with_a_management_token_at_the_base_url(self):
        routes = {
            ("POST", "/api/v2/roles/rol_1/users"): (200, {}),
            ("GET", "/api/v2/users"): (200, {"users": [{"email": "a@b"}]}),
        }
        values = {
            "au__auth0_domain": "x.us.auth0.com",
            "au__oauth_AccessToken": "mgmt",
            "au__base_url": "{url}",
        }
        with self.run_with(routes, values, "auth0") as api:
            from autokitteh.auth0 import auth0_client

            auth0 = auth0_client("au")
            auth0.roles.add_users("rol_1", ["auth0|u1"])
            users = auth0.users.list(q="created_at:[a TO b]", search_engine="v3")
        self.assertEqual(users["users"], [{"email": "a@b"}])
        add, listed = api.requests
        self.assertEqual(
            (add["path"], json.loads(add["body"])), ("/api/v2/roles/rol_1/users", {"users": ["auth0|u1"]})
        )
        self.assertTrue(listed["path"].startswith("/api/v2/users?"))
        self.assertEqual({r["headers"]["Authorization"] for r in api.requests}, {"Bearer mgmt"})

    def test_auth0_without_a_base_url_calls_the_domain(self):
        with self.run_with({}, {"au__auth0_domain": "x.us.auth0.com", "au__oauth_AccessToken": "t"}, "auth0"):
            from autokitteh.auth0 import auth0_client

            roles = auth0_client("au").roles
        self.assertEqual((roles.protocol, roles.domain), ("https", "x.us.auth0.com"))

    def test_asana_with_a_pat_at_the_base_url(self):
        routes = {("GET", "/api/1.0/users/me"): (200, {"data": {"gid": "1", "name": "Cat"}})}
        with self.run_with(routes, {"as__pat": "2/abc", "as__base_url": "{url}/api/1.0/"}, "asana") as api:
            import asana

            from autokitteh.asana import asana_client

            me = asana.UsersApi(asana_client("as")).get_user("me", {})
        self.assertEqual(me["name"], "Cat")
        self.assertEqual(api.requests[0]["headers"]["Authorization"], "Bearer 2/abc")

    def test_notion_with_an_api_key_else_an_oauth_token(self):
        routes = {("POST", "/v1/pages"): (200, {"id": "p1", "url": "https://notion.so/p1"})}
        values = {"no__api_key": "secret_1", "no__oauth_access_token": "tok", "no__base_url": "{url}"}
        with self.run_with(routes, values, "notion_client") as api:
            from autokitteh.notion import notion_client

            page = notion_client("no").pages.create(parent={"database_id": "d"}, properties={})
            del os.environ["no__api_key"]
            notion_client("no").pages.create(parent={"database_id": "d"}, properties={})
        self.assertEqual(page["id"], "p1")
        self.assertEqual(
            [r["headers"]["Authorization"] for r in api.requests], ["Bearer secret_1", "Bearer tok"]
        )
        self.assertEqual(json.loads(api.requests[0]["body"])["parent"], {"database_id": "d"})

    def test_pipedrive_with_an_api_token_at_the_company_domain(self):
        deals = {"success": True, "data": [{"title": "Deal", "value": 5, "currency": "USD"}]}
        routes = {("GET", "/v1/deals"): (200, deals)}
        with self.run_with(routes, {"pd__api_key": "k1", "pd__company_domain": "{url}"}, "pipedrive") as api:
            from autokitteh.pipedrive import pipedrive_client

            got = pipedrive_client("pd").deals.get_all_deals()
            os.environ.update(pd__company_domain="https://x.pipedrive.com", pd__base_url=api.url + "/")
            pipedrive_client("pd").deals.get_all_deals()  # the base URL wins over the company domain
        self.assertEqual(got, deals)
        self.assertEqual([r["path"] for r in api.requests], ["/v1/deals?api_token=k1"] * 2)

    def test_reddit_with_a_script_app_and_a_password(self):
        routes = {
            ("POST", "/api/v1/access_token"): (200, {"access_token": "rt1", "token_type": "bearer"}),
            ("GET", "/api/v1/me"): (200, {"name": "kitteh"}),
        }
        values = {
            "rd__client_id": "cid",
            "rd__client_secret": "cs",
            "rd__user_agent": "hookline-test/1",
            "rd__username": "kitteh",
            "rd__password": "pw",
            "rd__base_url": "{url}/",
        }
        with self.run_with(routes, values, "praw") as api:
            from autokitteh.reddit import reddit_client

            reddit = reddit_client("rd")
            me = reddit.user.me()
            del os.environ["rd__password"]
            read_only = reddit_client("rd").read_only
        self.assertEqual((me["name"], reddit.read_only, read_only), ("kitteh", False, True))
        token, get = api.requests
        self.assertEqual(token["headers"]["Authorization"], "Basic Y2lkOmNz")  # cid:cs
        self.assertEqual(token["body"], b"grant_type=password&username=kitteh&password=pw")
        self.assertEqual(
            (get["headers"]["Authorization"], get["headers"]["User-Agent"]), ("bearer rt1", "hookline-test/1")
        )

    def test_telegram_with_a_bot_token_at_the_base_url(self):
        routes = {
            ("POST", "/bot123:abc/getMe"): (200, {"ok": True, "result": {"id": 123, "username": "kit_bot"}}),
            ("POST", "/bot123:abc/sendMessage"): (200, {"ok": True, "result": {"message_id": 7}}),
        }
        with self.run_with(routes, {"tg__BotToken": "123:abc", "tg__base_url": "{url}"}, "telegram") as api:
            from autokitteh.telegram import telegram_client

            bot = telegram_client("tg")
            me = asyncio.run(bot.get_me())
            sent = asyncio.run(bot.send_message(chat_id=5, text="meow"))
        self.assertEqual((me["username"], sent["message_id"]), ("kit_bot", 7))
        self.assertEqual(json.loads(api.requests[1]["body"]), {"chat_id": 5, "text": "meow"})

    def test_discord_client_logs_in_with_bot_token(self):
        routes = {("GET", "/api/v10/users/@me"): (200, {"id": "9", "username": "kitbot"})}
        with self.run_with(
            routes, {"dc__BotToken": "bot-tok", "dc__base_url": "{url}/api/v10"}, "discord"
        ) as api:
            import discord

            import autokitteh.discord as ak_discord

            intents = discord.Intents.default()
            intents.message_content = True
            client = ak_discord.discord_client("dc", intents)
            asyncio.run(client.login(ak_discord.bot_token("dc")))
            default = ak_discord.discord_client("dc").intents
        self.assertIs(client.intents, intents)
        self.assertFalse(default.message_content)
        self.assertEqual(client.user["username"], "kitbot")
        self.assertEqual(api.requests[0]["headers"]["Authorization"], "Bot bot-tok")

    def test_teams_client_of_a_daemon_app_at_the_base_url(self):
        routes = {
            ("POST", "/tid/oauth2/v2.0/token"): (200, {"access_token": "graph-tok", "expires_in": 3600}),
            ("GET", "/v1.0/users"): (200, {"value": [{"displayName": "Cat"}]}),
        }
        values = {
            "ms__auth_type": "daemonApp",
            "ms__private_client_id": "app-1",
            "ms__private_client_secret": "shh",
            "ms__private_tenant_id": "tid",
            "ms__base_url": "{url}/v1.0",
            "AZURE_AUTHORITY_HOST": "{url}",
        }
        modules = ("msgraph", "msgraph_core", "azure")
        with self.run_with(routes, values, *modules) as api:
            from autokitteh.microsoft import teams_client

            users = asyncio.run(teams_client("ms").users.get())
            del os.environ["ms__base_url"]
            graph = teams_client("ms").request_adapter
            os.environ["ms__private_certificate"] = "-----BEGIN CERTIFICATE-----"
            by_certificate = teams_client("ms").request_adapter.auth_provider.credentials
        self.assertEqual(users["value"], [{"displayName": "Cat"}])
        token, get = api.requests
        self.assertEqual(
            token["body"],
            b"client_id=app-1&client_secret=shh&grant_type=client_credentials&scope=https%3A%2F%2Fgraph.microsoft.com%2F.default",
        )
        self.assertEqual(get["headers"]["Authorization"], "Bearer graph-tok")
        self.assertEqual(graph.base_url, "https://graph.microsoft.com/v1.0")
        self.assertEqual(type(graph.auth_provider.credentials).__name__, "ClientSecretCredential")
        self.assertEqual(type(by_certificate).__name__, "CertificateCredential")
        self.assertEqual(by_certificate.certificate_data, b"-----BEGIN CERTIFICATE-----")

    def test_teams_client_says_what_its_auth_type_needs(self):
        from autokitteh.microsoft import teams_client

        with env(ms__auth_type="oauthDefault"):
            with self.assertRaisesRegex(ConnectionInitError, AUTHORIZE.format("ms")):
                teams_client("ms")
        with env():
            with self.assertRaisesRegex(ConnectionInitError, "set ms__auth_type"):
                teams_client("ms")
        with env(ms__auth_type="daemonApp"):
            with self.assertRaisesRegex(ConnectionInitError, "set ms__private_client_id"):
                teams_client("ms")
        with env(ms__auth_type="daemonApp", ms__private_client_id="i"):
            with self.assertRaisesRegex(ConnectionInitError, "set ms__private_client_secret"):
                teams_client("ms")
        with env(ms__auth_type="apiKey"), self.assertRaisesRegex(ValueError, "invalid auth type 'apiKey'"):
            teams_client("ms")

    def test_gemini_with_an_api_key_over_rest_at_the_base_url(self):
        answer = {"candidates": [{"content": {"parts": [{"text": "Meow."}]}}]}
        routes = {("POST", "/v1beta/models/gemini-2.0-flash:generateContent"): (200, answer)}
        with self.run_with(routes, {"ge__api_key": "AIza-1", "ge__base_url": "{url}"}, "google") as api:
            from autokitteh.google import gemini_client

            reply = gemini_client("ge", model_name="gemini-2.0-flash").generate_content("Say meow")
        self.assertEqual(reply.text, "Meow.")
        [r] = api.requests
        self.assertEqual(r["headers"]["X-Goog-Api-Key"], "AIza-1")
        self.assertEqual(json.loads(r["body"])["contents"][0]["parts"][0]["text"], "Say meow")


TOKEN = ("POST", "/token"), (200, {"access_token": "ya29.test", "expires_in": 3600, "token_type": "Bearer"})
GOOGLE_MODULES = ("google", "googleapiclient", "gspread", "cryptography", "httplib2", "google_auth_httplib2")


class RealPackageTest(unittest.TestCase):
    """Helpers whose package this machine's index has: the real package, real HTTP."""

    def test_boto3_signs_with_the_connection_keys_at_the_base_url(self):
        routes = {("POST", "/"): (200, {"TableNames": ["cats"]})}
        values = {"aw__AccessKeyID": "AKIAEXAMPLE", "aw__SecretKey": "s3cr3t", "aw__Region": "eu-west-1"}
        with StandIn(routes) as api, on_path(installed("boto3", "boto3"), "boto3", "botocore"):
            with env(**values, aw__base_url=api.url):
                from autokitteh.aws import boto3_client

                tables = boto3_client("aw", "dynamodb").list_tables()["TableNames"]
                other = boto3_client("aw", "dynamodb", "us-east-2")
                os.environ["aw__Token"] = "sess"
                boto3_client("aw", "dynamodb").list_tables()
        self.assertEqual(tables, ["cats"])
        self.assertEqual(other.meta.region_name, "us-east-2")
        first, second = api.requests
        self.assertRegex(
            first["headers"]["Authorization"], r"Credential=AKIAEXAMPLE/\d{8}/eu-west-1/dynamodb/aws4_request"
        )
        self.assertEqual(first["headers"]["X-Amz-Target"], "DynamoDB_20120810.ListTables")
        self.assertNotIn("X-Amz-Security-Token", first["headers"])
        self.assertEqual(second["headers"]["X-Amz-Security-Token"], "sess")

    def test_gspread_opens_a_sheet_at_the_base_url(self):
        folder = installed("gspread", "gspread")
        sheet = {"spreadsheetId": "abc", "properties": {"title": "Cats"}, "sheets": []}
        routes = dict([TOKEN, (("GET", "/v4/spreadsheets/abc"), (200, sheet))])
        with StandIn(routes) as api, on_path(folder, *GOOGLE_MODULES, "requests", "urllib3"):
            with env(gs__JSON=service_account_key(api.url + "/token"), gs__base_url=api.url):
                from autokitteh.google import gspread_client

                title = gspread_client("gs").open_by_key("abc").title
        self.assertEqual(title, "Cats")
        token, get = api.requests
        self.assertIn(b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", token["body"])
        self.assertEqual(get["headers"]["Authorization"], "Bearer ya29.test")
        self.assertTrue(get["path"].startswith("/v4/spreadsheets/abc"))

    def test_youtube_and_drive_with_autokitteh_scopes(self):
        folder = installed("google-api-python-client", "googleapiclient.discovery")
        channels = {"items": [{"id": "UC1", "snippet": {"title": "Kittens"}}]}
        routes = dict([TOKEN, (("GET", "/youtube/v3/channels"), (200, channels))])
        with StandIn(routes) as api, on_path(folder, *GOOGLE_MODULES), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # httplib2's use of pyparsing's old names
            with env(yt__JSON=service_account_key(api.url + "/token"), yt__base_url=api.url + "/"):
                from autokitteh.google import google_drive_client, youtube_client

                got = youtube_client("yt").channels().list(part="snippet", mine=True).execute()
                drive = google_drive_client("yt")
        self.assertEqual(got["items"][0]["snippet"]["title"], "Kittens")
        token, get = api.requests
        self.assertEqual(get["headers"]["Authorization"], "Bearer ya29.test")
        claims = _jwt_claims(token["body"])
        self.assertEqual(
            claims["scope"].split(),
            [
                f"https://www.googleapis.com/auth/{s}"
                for s in ("youtube.readonly", "youtube.upload", "youtube")
            ],
        )
        self.assertEqual(drive._http.credentials.scopes, ["https://www.googleapis.com/auth/drive.file"])

    def test_zoom_sends_the_oauth_token_at_the_base_url(self):
        routes = {("GET", "/v2/users/me"): (200, {"id": "z1"})}
        with (
            StandIn(routes) as api,
            on_path(installed("requests-toolbelt", "requests_toolbelt"), "requests_toolbelt"),
        ):
            with env(zm__oauth_access_token="zt", zm__base_url=api.url + "/v2"):
                from autokitteh.zoom import zoom_client

                me = zoom_client("zm").get("users/me").json()
                del os.environ["zm__base_url"]
                self.assertEqual(zoom_client("zm").base_url, "https://api.zoom.us/v2/")
            with env():
                with self.assertRaises(ConnectionInitError) as cm:
                    zoom_client("zm")
        self.assertEqual(me, {"id": "z1"})
        self.assertEqual(api.requests[0]["headers"]["Authorization"], "Bearer zt")
        self.assertIn(AUTHORIZE.format("zm"), str(cm.exception))


def _jwt_claims(form_body):
    """The claims of the JWT a service account sends to the token URL."""
    import base64
    from urllib.parse import parse_qs

    assertion = parse_qs(form_body.decode())["assertion"][0]
    payload = assertion.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


if __name__ == "__main__":
    unittest.main()
