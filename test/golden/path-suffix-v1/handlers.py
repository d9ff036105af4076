from workflow_sdk import http_outcome


def on_event(event):
    # Routing on the suffix's parts, as AutoKitteh's sample projects do.
    parts = event.data.url.path_suffix.split("/")
    print(parts)
    if parts[:1] == ["board"] and len(parts) == 3:
        http_outcome(200, f"board {parts[1]}, cell {parts[2]}")
    else:
        http_outcome(404, "no such page")
