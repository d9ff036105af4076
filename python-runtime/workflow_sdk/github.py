"""`autokitteh.github.github_client`: a PyGithub client from a connection's personal access token
or GitHub App installation.

>>> import os; os.environ["gh__pat"] = "ghp_example"
>>> github_client("gh").requester.base_url  # doctest: +SKIP
'https://api.github.com'
"""

import os
import time
from urllib.parse import urljoin

from .connections import base_url, check_connection_name, encode_jwt, import_package, require, var
from .errors import ConnectionInitError

__all__ = ["github_client"]


def github_client(connection, **kwargs):
    """A `github.Github` client for the connection, as AutoKitteh makes it.

    With `<connection>__pat`: authenticated with `Auth.Token` of it. Else, a GitHub App
    installation (`<connection>__app_id` and `<connection>__install_id`): authenticated as the
    installation, with installation tokens PyGithub asks GitHub for (and renews) with App JWTs the
    service signs (`encode_jwt`): the App's private key stays in the service.

    The API URL: `<connection>__base_url` as is (Hookline); else GitHub Enterprise Server's
    `<connection>__enterprise_url` (or `GITHUB_ENTERPRISE_URL`) + `api/v3`, as AutoKitteh does;
    else github.com. Keyword arguments go to `Github(...)` (`GithubIntegration(...)` for an App).
    """
    check_connection_name(connection)
    pat = var(connection, "pat")
    app_id, install_id = var(connection, "app_id"), var(connection, "install_id")
    if pat is None and app_id is None and install_id is None:
        require(connection, "pat", "install_id")  # raises, naming both ways to connect
    github = import_package(connection, "github", "PyGithub")
    override = base_url(connection)
    enterprise = var(connection, "enterprise_url") or os.environ.get("GITHUB_ENTERPRISE_URL")
    if override:
        kwargs["base_url"] = override.rstrip("/")
    elif enterprise:
        kwargs["base_url"] = urljoin(enterprise, "api/v3")
    if pat is not None:
        return github.Github(auth=github.Auth.Token(pat), **kwargs)
    app, installation = _app_ids(connection, app_id, install_id)
    auth = _service_signed(github, app, connection)
    return github.GithubIntegration(auth=auth, **kwargs).get_github_for_installation(installation)


def _app_ids(connection, app_id, install_id):
    """The App id and installation id as numbers; a missing or malformed one says which."""
    ids = []
    for name, value in (("app_id", app_id), ("install_id", install_id)):
        if value is None:
            raise ConnectionInitError(connection, f"set {connection}__{name} (a GitHub App installation)")
        if not value.strip().isdigit():
            raise ValueError(f"{connection}__{name} is not a GitHub id: {value!r}")
        ids.append(int(value))
    return ids


def _service_signed(github, app_id, connection):
    """PyGithub's `Auth.AppAuth` for App `app_id` whose JWTs the service signs (`encode_jwt`);
    it pickles (a durable session's activity result holds it) as this call, by reference."""

    class ServiceSignedAppAuth(github.Auth.AppAuth):
        def __init__(self):  # no private key here: the service holds it
            self._app_id = app_id
            self._jwt_expiry = github.Consts.DEFAULT_JWT_EXPIRY
            self._jwt_issued_at = github.Consts.DEFAULT_JWT_ISSUED_AT

        def create_jwt(self, expiration=None):
            now = int(time.time())
            lasts = self._jwt_expiry if expiration is None else expiration
            claims = {"iat": now + self._jwt_issued_at, "exp": now + lasts, "iss": app_id}
            return encode_jwt(claims, connection, "RS256")

        def __reduce__(self):
            return _unpickle_auth, (app_id, connection)

    return ServiceSignedAppAuth()


def _unpickle_auth(app_id, connection):
    return _service_signed(import_package(connection, "github", "PyGithub"), app_id, connection)
