import sys

print("loading the module")
print("a warning on stderr", file=sys.stderr)


def on_event(event):
    pass
