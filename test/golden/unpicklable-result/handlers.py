import sqlite3


def on_event(event):
    conn = sqlite3.connect(":memory:")
    print("not reached", conn)
