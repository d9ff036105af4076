"""`autokitteh.pipedrive.pipedrive_client`: a `pipedrive.client.Client` (pipedrive-python-lib).

The variables, as AutoKitteh names them: `<connection>__company_domain` (your company's URL,
`https://example.pipedrive.com`) and `<connection>__api_key` (a personal API token).
"""

from .connections import base_url, check_connection_name, import_package, require

__all__ = ["pipedrive_client"]


def pipedrive_client(connection):
    """`Client(domain=<company_domain>)` with `set_api_token(<api_key>)`; with
    `<connection>__base_url` (Hookline) as the domain."""
    check_connection_name(connection)
    api_key = require(connection, "api_key")
    domain = base_url(connection) or require(connection, "company_domain")
    pipedrive = import_package(connection, "pipedrive.client", "pipedrive-python-lib")
    client = pipedrive.Client(domain=domain)
    client.set_api_token(api_key)
    return client
