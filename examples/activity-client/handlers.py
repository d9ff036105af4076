"""A sqlite3 connection cannot be pickled, so every use of it stays inside one activity."""

import sqlite3
import tempfile
from pathlib import Path

import workflow_sdk

DB = Path(tempfile.gettempdir()) / "hookline-activity-client.db"


@workflow_sdk.activity
def save_and_count(text: str) -> int:
    # Open, use and close the connection within the activity: only the int leaves it.
    with sqlite3.connect(DB) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES (?)", (text,))
        return conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0]


def on_store(event):
    count = save_and_count(event.data.body.text or "")
    workflow_sdk.http_outcome(status_code=201, json={"notes": count})
