"""`autokitteh.google`: Google API clients from a service account's JSON key in `<connection>__JSON`,
and Gemini from an API key.

Gmail, Calendar, Drive, Forms, Sheets (also through gspread) and YouTube, with AutoKitteh's
default scopes. The discovery documents bundled with google-api-python-client are used (no
network to build a client); with `<connection>__base_url` (Hookline) the client calls that URL
instead of googleapis.com. A connection whose `<connection>__auth_type` is `oauth` (a user's
consent) goes through `_oauth_creds`.
"""

import datetime
import json
import re

from .connections import (
    authorize_command,
    authorize_first,
    base_url,
    check_connection_name,
    import_package,
    is_oauth,
    require,
    var,
)
from .errors import ConnectionInitError, ConnectionNotSupportedError

__all__ = [
    "google_pydantic_ai_provider",
    "gemini_client",
    "gmail_client",
    "google_calendar_client",
    "google_creds",
    "google_drive_client",
    "google_forms_client",
    "google_id",
    "google_sheets_client",
    "gspread_client",
    "youtube_client",
]

# The hosts gspread calls (Sheets v4, Drive v3), sent to `<connection>__base_url` when it is set.
GSPREAD_HOSTS = ("sheets.googleapis.com", "www.googleapis.com")


def google_creds(integration, connection, scopes, **kwargs):
    """Service-account credentials from `<connection>__JSON`, for `googleapiclient.discovery.build`."""
    check_connection_name(connection)
    if is_oauth(connection):
        return _oauth_creds(integration, connection, scopes)
    key = var(connection, "JSON")
    if key is None:
        # Neither set up: say both ways, the OAuth one first (what AutoKitteh's UI offers first).
        raise ConnectionInitError(
            connection,
            f"authorize it with OAuth: {authorize_command(connection)}; or set "
            f"{connection}__JSON to a service account's JSON key (cli var set --secret)",
        )
    try:
        info = json.loads(key)
    except ValueError:
        raise ConnectionInitError(
            connection, f"{connection}__JSON is not a service account's JSON key"
        ) from None
    service_account = import_package(connection, "google.oauth2.service_account", "google-auth")
    return service_account.Credentials.from_service_account_info(info, scopes=scopes, **kwargs)


def _oauth_creds(integration, connection, scopes):
    """A user's OAuth credentials (`auth_type` `oauth`): the access token in
    `<connection>__oauth_AccessToken`, refreshed through the service when it expires (the
    client secret stays there), as AutoKitteh's are."""
    token = var(connection, "oauth_AccessToken")
    if token is None:
        raise authorize_first(connection)
    import_package(connection, "google.oauth2.credentials", "google-auth")
    from .google_credentials import ServiceCredentials

    expiry = go_time(var(connection, "oauth_Expiry"))
    return ServiceCredentials(token, expiry, scopes, integration, connection)


_TIME = re.compile(r"\s*(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.\d+)?\s*(Z|[+-]\d\d:?\d\d)?")


def go_time(text):
    """A time as Go prints it (`2026-11-28 16:00:00 +0000 UTC`), or RFC 3339, as a naive UTC
    datetime; None when absent or Go's zero time.

    >>> go_time("2026-11-28 16:00:00 +0000 UTC")
    datetime.datetime(2026, 11, 28, 16, 0)
    >>> go_time("0001-01-01 00:00:00 +0000 UTC") is None
    True
    """
    m = _TIME.match(text or "")
    if m is None:
        return None
    date, clock, zone = m.groups()
    zone = "+00:00" if zone in (None, "Z") else zone if ":" in zone else f"{zone[:3]}:{zone[3:]}"
    at = datetime.datetime.fromisoformat(f"{date}T{clock}{zone}")
    at = at.astimezone(datetime.UTC).replace(tzinfo=None)
    return None if at.year < 1971 else at


def _build(integration, connection, api, version, scopes):
    creds = google_creds(integration, connection, scopes)
    discovery = import_package(connection, "googleapiclient.discovery", "google-api-python-client")
    override = base_url(connection)
    options = {"client_options": {"api_endpoint": override}} if override else {}
    return discovery.build(api, version, credentials=creds, static_discovery=True, **options)


def gmail_client(connection, **kwargs):
    """Gmail API v1 (scopes gmail.modify, gmail.settings.basic)."""
    scopes = [
        "https://www.googleapis.com/auth/gmail.modify",
        "https://www.googleapis.com/auth/gmail.settings.basic",
    ]
    return _build("gmail", connection, "gmail", "v1", scopes)


def google_calendar_client(connection, **kwargs):
    """Calendar API v3 (scopes calendar, calendar.events)."""
    scopes = ["https://www.googleapis.com/auth/calendar", "https://www.googleapis.com/auth/calendar.events"]
    return _build("googlecalendar", connection, "calendar", "v3", scopes)


def google_drive_client(connection, **kwargs):
    """Drive API v3 (scope drive.file: the files the app made or was given, as AutoKitteh asks)."""
    return _build("googledrive", connection, "drive", "v3", ["https://www.googleapis.com/auth/drive.file"])


def google_forms_client(connection, **kwargs):
    """Forms API v1 (scopes forms.body, forms.responses.readonly)."""
    scopes = [
        "https://www.googleapis.com/auth/forms.body",
        "https://www.googleapis.com/auth/forms.responses.readonly",
    ]
    return _build("googleforms", connection, "forms", "v1", scopes)


def google_sheets_client(connection, **kwargs):
    """Sheets API v4 (scope spreadsheets)."""
    return _build(
        "googlesheets", connection, "sheets", "v4", ["https://www.googleapis.com/auth/spreadsheets"]
    )


def gspread_client(connection, **kwargs):
    """A `gspread.Client` (scope spreadsheets), from the same credentials as `google_sheets_client`."""
    creds = google_creds("googlesheets", connection, ["https://www.googleapis.com/auth/spreadsheets"])
    gspread = import_package(connection, "gspread", "gspread")
    client = gspread.authorize(creds)
    override = base_url(connection)
    if override:
        from .redirect import redirect

        redirect(client.http_client.session, override, GSPREAD_HOSTS)
    return client


def youtube_client(connection, **kwargs):
    """YouTube Data API v3 (scopes youtube.readonly, youtube.upload, youtube)."""
    scopes = [
        "https://www.googleapis.com/auth/youtube.readonly",
        "https://www.googleapis.com/auth/youtube.upload",
        "https://www.googleapis.com/auth/youtube",
    ]
    return _build("youtube", connection, "youtube", "v3", scopes)


def gemini_client(connection, **kwargs):
    """`genai.configure(api_key=<connection>__api_key)` then `GenerativeModel(**kwargs)`, as
    AutoKitteh does (`google-generativeai`). With `<connection>__base_url` (Hookline), requests go
    there over REST (`api_endpoint`)."""
    check_connection_name(connection)
    api_key = require(connection, "api_key")
    genai = import_package(connection, "google.generativeai", "google-generativeai")
    override = base_url(connection)
    extra = {"transport": "rest", "client_options": {"api_endpoint": override}} if override else {}
    genai.configure(api_key=api_key, **extra)
    return genai.GenerativeModel(**kwargs)


_ID = re.compile(r"(.*/d/(e/)?)?([\w-]{20,})")


def google_id(url):
    """The document id in a Docs, Forms or Sheets URL (an id stays as it is).

    >>> google_id("https://docs.google.com/spreadsheets/d/1AbCdEfGhIjKlMnOpQrStUvWx/edit")
    '1AbCdEfGhIjKlMnOpQrStUvWx'
    """
    m = _ID.match(url)
    if m is None:
        raise ValueError(f'Invalid Google ID in "{url}"')
    return m.group(3)


def google_pydantic_ai_provider(connection, **kwargs):
    """AutoKitteh's Pydantic AI provider: not supported by this service yet (make pydantic-ai's
    provider from the connection's vars, `os.environ["<connection>__…"]`)."""
    raise ConnectionNotSupportedError("autokitteh.google.google_pydantic_ai_provider", connection)
