"""Counts POSTs in the project's store and answers the new count."""

from workflow_sdk import add_values, get_store_public_url, http_outcome, publish_value


def on_hit(event):
    # One atomic step in the service: concurrent requests never lose a count.
    count = add_values("hits", 1)
    publish_value("hits")  # readable without a token at <public url>/hits
    http_outcome(200, json={"count": count, "public": f"{get_store_public_url()}/hits"})
