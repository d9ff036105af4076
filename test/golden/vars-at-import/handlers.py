import os

GREETING = os.environ["GREETING"]
print(f"imported with {GREETING}")


def on_event(event):
    print(f"{GREETING} from the handler")
