"""The workflow clock: how long workflow code has run at a stretch outside activities and waits."""

import asyncio
import threading
import time

from . import standby as standby_module


class Clock:
    """Paused while anything the workflow waits for (activity, reply, ack) is in flight."""

    def __init__(self):
        self._lock = threading.Lock()
        self._paused = 1  # starts paused; `resume()` when workflow code begins
        self._since = None

    def pause(self):
        with self._lock:
            self._paused += 1
            self._since = None

    def resume(self):
        with self._lock:
            self._paused -= 1
            if self._paused == 0:
                self._since = time.monotonic()

    @property
    def waiting(self):
        """Waits in flight (activities, replies, acks) and pauses; 0 while workflow code runs."""
        return self._paused

    def touch(self):
        """Start a new stretch (the asyncio heartbeat: the loop is not blocked)."""
        with self._lock:
            if self._paused == 0:
                self._since = time.monotonic()

    def running_for(self):
        since = self._since
        return 0.0 if since is None else time.monotonic() - since


def start_watchdog(clock, limit, on_timeout, standby=None):
    """A daemon thread that calls `on_timeout()` once the clock runs past `limit` seconds."""

    def watch():
        interval = min(0.05, limit / 10)
        while clock.running_for() <= limit:
            time.sleep(interval)
        on_timeout()

    return standby_module.start(watch, "hl-watchdog", standby)


def pause_in_select(clock, loop):
    """Count the time a workflow event loop waits in select() as waiting, not as workflow code."""
    select = loop._selector.select

    def select_(timeout=None):
        clock.pause()
        try:
            return select(timeout)
        finally:
            clock.resume()

    loop._selector.select = select_
    return loop


class ClockedLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """Event loops made on the workflow thread pause the workflow clock while they wait."""

    def __init__(self, clock, workflow_ident):
        super().__init__()
        self._clock, self._ident = clock, workflow_ident

    def new_event_loop(self):
        loop = super().new_event_loop()
        if threading.get_ident() == self._ident and hasattr(loop, "_selector"):
            pause_in_select(self._clock, loop)
        return loop
