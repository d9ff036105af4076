"""A parent session starts one child session per item; each child signals its result back."""

import autokitteh


def on_fan_out(event):
    items = (event.data.body.json or {}).get("items") or [1, 2, 3]
    parent = event.session_id
    children = [autokitteh.start("program.py:on_item", {"parent": parent, "item": n}) for n in items]
    total = 0
    for _ in children:
        # Signals that arrive before this wait are kept for it, in order.
        sig = autokitteh.next_signal("result", timeout=60)
        if sig is None:
            autokitteh.http_outcome(504, json={"error": "a child did not answer in time"})
            return
        total += sig.payload["square"]
    print(f"{len(children)} children, total of squares {total}")
    autokitteh.outcome({"total": total, "children": children})
    autokitteh.http_outcome(200, json={"children": len(children), "total": total})


def on_item(event):
    n = event.data["item"]
    autokitteh.signal(event.data["parent"], "result", {"item": n, "square": n * n})
