"""The one running session of this process (None outside the runner) and per-thread flags."""

import threading

current = None  # the runner's Session, set once per child process
_local = threading.local()


def in_activity_thread():
    return getattr(_local, "activity", False)


def mark_activity_thread():
    _local.activity = True
