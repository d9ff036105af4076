"""Threads started ahead of need, so a session does not wait for them to come up."""

import threading


class Standby:
    """A daemon thread that is already running and runs one target once it is given one.

    Starting a thread costs a wait for the new thread to be scheduled (about half a
    millisecond here); a pre-forked child starts its threads before its session arrives.
    """

    def __init__(self, name):
        self._target = None
        self._given = threading.Event()
        self.thread = threading.Thread(target=self._wait, name=name, daemon=True)
        self.thread.start()

    def _wait(self):
        self._given.wait()
        self._target()

    def run(self, target):
        self._target = target
        self._given.set()


def start(target, name, standby=None):
    """Run `target` on `standby` when there is one, else on a new daemon thread."""
    if standby is not None:
        standby.run(target)
        return standby.thread
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread
