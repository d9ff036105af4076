"""Connections as programs see them (`autokitteh.connections`), and what the client helpers share.

A connection's settings are the project's env vars named `<connection>__<var>` (set with
`cli var set`, or `connections[].vars` in the manifest); a client helper reads them from
`os.environ` when it is called, imports its package then, and raises `ConnectionInitError`
naming whatever is missing. `<connection>__base_url`, a Hookline addition, is used as is as the
client's API base URL (a local stand-in in tests, a company proxy). See docs/connection-clients.md.

>>> check_connection_name("github_conn")
>>> var("no_such_conn", "pat") is None
True
"""

import importlib
import os
import re
from datetime import UTC, datetime

from . import seam
from .errors import AutoKittehError, ConnectionInitError, OAuthRefreshError

__all__ = [
    "authorize_command",
    "authorize_first",
    "base_url",
    "check_connection_name",
    "encode_jwt",
    "import_package",
    "is_oauth",
    "refresh_oauth",
    "require",
    "var",
]

_NAME = re.compile(r"[A-Za-z_]\w*")


def check_connection_name(connection):
    """Raise ValueError unless `connection` is a valid connection name (AutoKitteh's rule).

    >>> check_connection_name("9lives")
    Traceback (most recent call last):
    ...
    ValueError: Invalid AutoKitteh connection name: '9lives'
    """
    if not isinstance(connection, str) or not _NAME.fullmatch(connection):
        raise ValueError(f"Invalid AutoKitteh connection name: {connection!r}")


def var(connection, name):
    """The value of `<connection>__<name>`, or None when it is unset or empty."""
    return os.environ.get(f"{connection}__{name}") or None


def require(connection, *names):
    """The first of `<connection>__<name>` that is set; else ConnectionInitError naming them all.

    >>> require("c", "oauth_access_token", "private_bot_token")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workflow_sdk.errors.ConnectionInitError: AutoKitteh connection 'c' not initialized: set ...
    """
    for name in names:
        value = var(connection, name)
        if value is not None:
            return value
    wanted = " or ".join(f"{connection}__{n}" for n in names)
    raise ConnectionInitError(connection, f"set {wanted} (cli var set --secret)")


def base_url(connection):
    """`<connection>__base_url` (Hookline): the API base URL to use instead of the provider's."""
    return var(connection, "base_url")


def is_oauth(connection):
    """Whether the connection was set up with OAuth: `<connection>__auth_type` is AutoKitteh's
    `oauth`, `oauthDefault` or `oauthPrivate`.

    >>> is_oauth("no_such_conn")
    False
    """
    return (var(connection, "auth_type") or "").startswith("oauth")


def authorize_command(connection):
    """The command that authorizes a connection, naming the session's project (HOOKLINE_PROJECT,
    which the service sets); `<project>` outside a session.

    >>> authorize_command("gmail")  # doctest: +SKIP
    'cli connection authorize mailbox/gmail'
    """
    project = os.environ.get("HOOKLINE_PROJECT") or "<project>"
    return f"cli connection authorize {project}/{connection}"


def authorize_first(connection):
    """The error an OAuth set-up raises while its tokens are not there to use: it names the command
    that authorizes the connection.

    >>> print(authorize_first("gmail"))  # doctest: +ELLIPSIS
    AutoKitteh connection 'gmail' not initialized: it uses OAuth; authorize it with: cli ...
    """
    return ConnectionInitError(
        connection,
        f"it uses OAuth; authorize it with: {authorize_command(connection)} "
        "(or set it up with a token instead: docs/connection-clients.md)",
    )


def import_package(connection, module, package):
    """Import `module` for a helper; a missing one raises ConnectionInitError naming `package`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or not (module == e.name or module.startswith(e.name + ".")):
            raise  # the package is there but one of its own dependencies is not: pip's error says which
        raise ConnectionInitError(
            connection,
            f"the Python package {package!r} is not installed (list it in the project's "
            "requirements.txt, or see which pre-installed packages are missing: cli config where)",
        ) from None


def encode_jwt(payload, connection, algorithm):
    """A JWT of the claims `payload` signed with the GitHub App private key of `connection`, as
    AutoKitteh's runner signs it: by the service, so the key never enters the session (its
    `<connection>__private_key` is not in `os.environ`). Only "RS256", which GitHub asks for.

    `github_client` calls it when PyGithub needs an installation token, from any thread: it is a
    request the service answers at once and never journals.

    >>> encode_jwt({"iss": 1}, "gh", "RS256")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workflow_sdk.errors.AutoKittehError: encode_jwt('gh'): needs a running Hookline session: ...
    """
    check_connection_name(connection)
    if not isinstance(payload, dict) or not all(_claim(k, v) for k, v in payload.items()):
        raise ValueError("encode_jwt: payload must be a dict of str to int (or str) claims")
    if not isinstance(algorithm, str):
        raise ValueError("encode_jwt: algorithm must be a string, such as 'RS256'")
    ask = getattr(seam.current, "unjournaled_request", None)
    if ask is None:
        raise AutoKittehError(
            f"encode_jwt({connection!r}): needs a running Hookline session: the service signs "
            "GitHub App JWTs with the App's private key"
        )
    fields = {"payload": dict(payload), "connection": connection, "algorithm": algorithm}
    return ask({"type": "encode_jwt", **fields})


def _claim(name, value):
    return isinstance(name, str) and isinstance(value, (int, str)) and not isinstance(value, bool)


def refresh_oauth(integration, connection):
    """A fresh OAuth access token of `connection`, refreshed by the service (the OAuth app's
    secret never enters the session): `(token, expiry)`, the expiry a naive UTC datetime (None
    when the provider gives none), as AutoKitteh's. Allowed inside activities, where client
    libraries refresh. The new token also replaces the connection's env var in this process.
    Raises OAuthRefreshError when the service cannot refresh (the connection needs authorizing).
    """
    check_connection_name(connection)
    session = seam.current
    call = getattr(session, "refresh_oauth", None)
    if call is None:
        raise AutoKittehError(f"refresh_oauth({integration!r}, {connection!r}) needs a running session")
    try:
        value = call(integration, connection)
    except AutoKittehError as e:
        raise OAuthRefreshError(connection, e) from None
    token, expiry = value["token"], value.get("expiry")
    at = None
    if expiry:
        at = datetime.fromisoformat(expiry.replace("Z", "+00:00")).astimezone(UTC)
        at = at.replace(tzinfo=None)
    for name in ("oauth_access_token", "oauth_AccessToken"):
        if var(connection, name) is not None:
            os.environ[f"{connection}__{name}"] = token
    return token, at
