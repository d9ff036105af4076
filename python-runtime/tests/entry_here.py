"""A handler file beside the tests.

workflow_sdk.testing resolves relative entries from the caller's folder.
"""


def session_id_of(event):
    return event.session_id
