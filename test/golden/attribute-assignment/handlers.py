def on_event(event):
    event["data"]["body"]["extra"] = 1
    print(event.data.body.extra)
    try:
        event.data.user = "x"
    except AttributeError as err:
        print(f"AttributeError: {err}"[:15])
    event.data.nested = "boom"
