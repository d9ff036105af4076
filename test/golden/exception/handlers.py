def check(value):
    if value != "ok":
        raise ValueError(f"bad value {value!r}")


def on_event(event):
    print("before")
    check(event.data.body.text)
    print("after")
