import sqlite3
import threading


def on_event(event):
    # Non-durable under version: v2: the spec's errors table, values are pickled; the lock fails.
    lock = threading.Lock()
    conn = sqlite3.connect(":memory:")
    with lock:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        print("rows", conn.execute("SELECT COUNT(*) FROM t").fetchone()[0])
