"""`autokitteh.google`: Google API clients from a service account's JSON key in `<connection>__JSON`.

Gmail, Calendar, Drive, Forms and Sheets, with AutoKitteh's default scopes. The discovery
documents bundled with google-api-python-client are used (no network to build a client); with
`<connection>__base_url` (Hookline) the client calls that URL instead of googleapis.com. OAuth
(user) connections are not supported here.
"""

import json
import re

from .connections import base_url, check_connection_name, import_package, require, var
from .errors import ConnectionInitError

__all__ = [
    "gmail_client",
    "google_calendar_client",
    "google_creds",
    "google_drive_client",
    "google_forms_client",
    "google_id",
    "google_sheets_client",
]


def google_creds(integration, connection, scopes, **kwargs):
    """Service-account credentials from `<connection>__JSON`, for `googleapiclient.discovery.build`."""
    check_connection_name(connection)
    if var(connection, "authType") == "oauth":
        raise ConnectionInitError(
            connection, f"OAuth (user) connections are not supported by this service; set {connection}__JSON"
        )
    key = require(connection, "JSON")
    try:
        info = json.loads(key)
    except ValueError:
        raise ConnectionInitError(
            connection, f"{connection}__JSON is not a service account's JSON key"
        ) from None
    service_account = import_package(connection, "google.oauth2.service_account", "google-auth")
    return service_account.Credentials.from_service_account_info(info, scopes=scopes, **kwargs)


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
    """Drive API v3 (scope drive)."""
    return _build("googledrive", connection, "drive", "v3", ["https://www.googleapis.com/auth/drive"])


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
