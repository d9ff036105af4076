"""`<connection>__base_url` for clients built on `requests`: a transport adapter that sends every
request for the provider's hosts to the base URL instead, path and query kept.

Mounted on the client's own session, so nothing else in the process changes; it goes through
pickle with the session (a client returned by an activity of a durable session). Imported only
by the helpers that need it, once `requests` is known to be there (the SDK needs only the
standard library).
"""

from urllib.parse import urlsplit

from requests.adapters import HTTPAdapter


class Redirect(HTTPAdapter):
    """Sends `https://<one of hosts>/<path>?<query>` to `<base>/<path>?<query>`."""

    __attrs__ = [*HTTPAdapter.__attrs__, "base", "hosts"]

    def __init__(self, base="", hosts=(), **kwargs):
        self.base, self.hosts = base.rstrip("/"), tuple(hosts)
        super().__init__(**kwargs)

    def send(self, request, *args, **kwargs):
        parts = urlsplit(request.url)
        if parts.hostname in self.hosts:
            request.url = self.base + parts.path + (f"?{parts.query}" if parts.query else "")
        return super().send(request, *args, **kwargs)


def redirect(session, base, hosts):
    """Mount a `Redirect` on `session` for each of `hosts`; returns the session."""
    adapter = Redirect(base, hosts)
    for host in hosts:
        session.mount(f"https://{host}/", adapter)
    return session
