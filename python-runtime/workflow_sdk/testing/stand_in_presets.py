"""The stand-in API server's presets by name (`PRESETS`: base path, credentials, routes) and the
names that stand for one of them (`_ALIASES`: gmail, calendar, drive, sheets are google)."""

from .stand_in_chat import _discord_routes, _slack_routes, _telegram_routes, _twilio_routes
from .stand_in_google import _google_routes
from .stand_in_trackers import _confluence_routes, _github_routes, _jira_routes


class _Preset:
    def __init__(self, base_path, credentials, routes):
        self.base_path, self.credentials, self.routes = base_path, credentials, routes


_ATLASSIAN_CREDENTIALS = {"Token": "stand-in-token", "Email": "stand-in@example.com"}

PRESETS = {
    "github": _Preset("", {"pat": "ghp_stand-in"}, _github_routes),
    "slack": _Preset("/api/", {"oauth_access_token": "xoxb-stand-in"}, _slack_routes),
    "telegram": _Preset("", {"BotToken": "100000001:stand-in"}, _telegram_routes),
    "google": _Preset(
        "/",
        {"auth_type": "oauth", "oauth_AccessToken": "ya29.stand-in", "oauth_Expiry": "2099-01-01T00:00:00Z"},
        _google_routes,
    ),
    "discord": _Preset("/api/v10", {"BotToken": "stand-in-bot-token"}, _discord_routes),
    "jira": _Preset("", _ATLASSIAN_CREDENTIALS, _jira_routes),
    "confluence": _Preset("/wiki", _ATLASSIAN_CREDENTIALS, _confluence_routes),
    "twilio": _Preset(
        "",
        {
            "Username": "AC00000000000000000000000000000000",
            "Password": "stand-in",
            "AccountSID": "AC00000000000000000000000000000000",
        },
        _twilio_routes,
    ),
}
_ALIASES = {
    "gmail": "google",
    "calendar": "google",
    "googlecalendar": "google",
    "drive": "google",
    "googledrive": "google",
    "sheets": "google",
    "googlesheets": "google",
    "gspread": "google",
}
