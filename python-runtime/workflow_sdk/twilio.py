"""`autokitteh.twilio.twilio_client`: a `twilio.rest.Client` from the connection's credentials.

The variables, as AutoKitteh names them: `<connection>__AccountSID`, and `__Username` /
`__Password` (the account SID and auth token, or an API key's SID and secret).
"""

from urllib.parse import urlsplit

from .connections import base_url, check_connection_name, import_package, require, var

__all__ = ["twilio_client"]


def twilio_client(connection):
    """`Client(username, password, account_sid=…)`; with `<connection>__base_url` (Hookline), every
    request to `https://<service>.twilio.com` goes to that base URL instead, path and query kept."""
    check_connection_name(connection)
    username = require(connection, "Username")
    password = require(connection, "Password")
    rest = import_package(connection, "twilio.rest", "twilio")
    override = base_url(connection)
    if not override:
        return rest.Client(username, password, account_sid=var(connection, "AccountSID"))
    http = import_package(connection, "twilio.http.http_client", "twilio")
    return rest.Client(
        username,
        password,
        account_sid=var(connection, "AccountSID"),
        http_client=_Redirected(http.TwilioHttpClient(), override),
    )


class _Redirected:
    """Twilio's HTTP client with the scheme and host of every URL replaced by the base URL's.

    Pickles as the client it wraps does (its state is the inner client and the base URL); what
    it does not have itself it takes from the inner client, once there is one.
    """

    def __init__(self, inner, base):
        self._inner = inner
        self._base = base.rstrip("/")

    def request(self, method, url, *args, **kwargs):
        parts = urlsplit(url)
        if parts.hostname and parts.hostname.endswith("twilio.com"):
            url = self._base + parts.path + (f"?{parts.query}" if parts.query else "")
        return self._inner.request(method, url, *args, **kwargs)

    def __getattr__(self, name):
        # Not while pickle builds it (no `_inner` yet: asking for it here would recurse), and no
        # special names (pickle asks for `__setstate__`, say): those are the wrapper's own.
        inner = self.__dict__.get("_inner")
        if inner is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(inner, name)
