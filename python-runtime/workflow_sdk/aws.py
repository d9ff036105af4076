"""`autokitteh.aws.boto3_client`: a boto3 client from the connection's AWS access key.

The variables, as AutoKitteh names them: `<connection>__AccessKeyID`, `__SecretKey`, `__Token`
(a session token, optional) and `__Region`.
"""

from .connections import base_url, check_connection_name, import_package, require, var

__all__ = ["boto3_client"]


def boto3_client(connection, service, region="", **kwargs):
    """`boto3.client(service, region, aws_access_key_id=…, aws_secret_access_key=…,
    aws_session_token=…, **kwargs)`; `region` defaults to `<connection>__Region`.

    With `<connection>__base_url` (Hookline) the client calls that URL (`endpoint_url`). Unlike
    AutoKitteh, a connection without keys raises ConnectionInitError instead of falling back to
    the credentials of the machine the service runs on.
    """
    check_connection_name(connection)
    if not service:
        raise ValueError("AWS service name is required")
    key_id = require(connection, "AccessKeyID")
    secret = require(connection, "SecretKey")
    boto3 = import_package(connection, "boto3", "boto3")
    override = base_url(connection)
    if override:
        kwargs.setdefault("endpoint_url", override)
    return boto3.client(
        service,
        region or var(connection, "Region"),
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        aws_session_token=var(connection, "Token"),
        **kwargs,
    )
