from workflow_sdk import http_outcome


def on_event(event):
    http_outcome(102 + 100, more=True)
    http_outcome(201, json={"got": event.data.body.json})
    http_outcome(500, "ignored: the response is already sent")
    print("after the response")
