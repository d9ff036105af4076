"""The workflow clock: how long workflow code has run at a stretch outside activities and waits,
and how long the workflow thread has been importing modules (a bound of its own, IMPORT_FACTOR)."""

import asyncio
import importlib._bootstrap
import threading
import time

from . import standby as standby_module

# Importing modules is not workflow code: it has its own bound, this many times the workflow
# code's (120 s at the default 10 s). A heavy package (googleapiclient, openai) imports in a
# second or two on a quiet machine and in tens of seconds on a loaded one; AutoKitteh puts no
# bound on it, and this one only ends an import that hangs (docs/python-runtime.md).
IMPORT_FACTOR = 12


def import_limit(limit):
    """The bound on one import on the workflow thread, for a workflow bound of `limit` seconds."""
    return limit * IMPORT_FACTOR


class Clock:
    """Paused while anything the workflow waits for (activity, reply, ack) is in flight."""

    def __init__(self):
        self._lock = threading.Lock()
        self._paused = 1  # starts paused; `resume()` when workflow code begins
        self._since = None
        self._imports = 0  # modules the workflow thread is loading, nested
        self._import_since = None

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

    def import_begin(self):
        """The workflow thread starts loading a module: workflow code pauses, the import's time runs."""
        with self._lock:
            self._imports += 1
            if self._imports == 1:
                self._import_since = time.monotonic()
                self._paused += 1
                self._since = None

    def import_end(self):
        with self._lock:
            self._imports -= 1
            if self._imports == 0:
                self._import_since = None
                self._paused -= 1
                if self._paused == 0:
                    self._since = time.monotonic()

    def importing_for(self):
        """Seconds the workflow thread has been loading modules (the outermost import), else 0."""
        since = self._import_since
        return 0.0 if since is None else time.monotonic() - since

    def over(self, limit):
        """ "import" or "workflow" once either runs past its bound (`limit` for workflow code), else None."""
        if self.importing_for() > import_limit(limit):
            return "import"
        return "workflow" if self.running_for() > limit else None


_tracked = {"clock": None, "ident": None}


def track_imports(clock, workflow_ident):
    """Count the time the workflow thread spends loading modules (an `import` statement or
    `importlib.import_module` of a module not loaded yet, at module load or lazily) on `clock`'s
    import bound, not as workflow code. Installed once per process; a later call (the next
    session of a reused process) points it at that session's clock and thread."""
    _tracked.update(clock=clock, ident=workflow_ident)
    if getattr(importlib._bootstrap._find_and_load, "_hl_tracked", False):
        return
    real = importlib._bootstrap._find_and_load

    def _find_and_load(name, import_):
        c = _tracked["clock"]
        if c is None or threading.get_ident() != _tracked["ident"]:
            return real(name, import_)
        c.import_begin()
        try:
            return real(name, import_)
        finally:
            c.import_end()

    _find_and_load._hl_tracked = True
    importlib._bootstrap._find_and_load = _find_and_load


def start_watchdog(clock, limit, on_timeout, standby=None, tick=None):
    """A daemon thread that calls `on_timeout()` once workflow code runs past `limit` seconds at a
    stretch, or an import past `import_limit(limit)`; and `tick()` at each of its looks."""

    def watch():
        interval = min(0.05, limit / 10)
        while clock.over(limit) is None:
            time.sleep(interval)
            if tick is not None:
                tick()
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
