from workflow_sdk import Event


def on_event(event: Event):
    print(event.data.body.text == event["data"]["body"]["text"])
    print(event.data.body.text)
    print(event.data.body.bytes)
    print(event.data.body.json["n"] + 1)
    print(event.data.headers.get("x-thing"), event.data.headers.get("X-Missing", "default"))
    print(event.data.url.path_suffix, event.data.url.query["q"], event.data.method)
    print(event.event_type, event.session_id == event["session_id"])
