"""A session's process: start → import → handler → done, its output, its limits and its end.

`SessionProcess` owns what is the process's: the socket, the `hello` and `start`, the capture
of fds 1 and 2 and of sys.stdout/sys.stderr, the import hook and the watchdog, and how the
process ends (`finish`, `fatal`). What the session means to the SDK (steps, requests, outcomes)
is its `Session` (session.py), which `workflow_sdk.seam.current` holds. See README.md.
"""

import asyncio
import os
import sys
import threading
import time
import traceback
from _thread import get_ident

from .. import errors, seam
from ..event import event_from_wire
from . import ahead, faults, limits, reuse, warm
from .activities import Activities
from .capture import FdCapture, LineWriter
from .handler import import_handler, invoke, parse_entry, wire_result
from .protocol import Channel, check_start
from .rebuild import pad_args
from .session import Session
from .tracebacks import exc_text, format_exception, user_frames
from .watchdog import IMPORT_FACTOR, Clock, ClockedLoopPolicy, import_limit, start_watchdog, track_imports

__all__ = ["SessionProcess", "run_session"]


class SessionProcess:
    def __init__(self, sock, exit=os._exit, prepared=None):
        self.prepared = prepared  # what a spare set up before its session (ahead.Prepared)
        self._exit = exit
        self.clock = Clock()
        self.channel = Channel(sock, on_lost=lambda: exit(1), on_stop=lambda: exit(0), on_bad=self.fatal)
        self.session = Session(self.channel, self.clock, self.fatal)
        self.limit = None  # seconds of workflow code at a stretch, from `start`
        self.reuse = None  # a reused process's sessions after sessions (reuse.py); None: one session
        self._finishing = threading.Lock()
        self._writers = []
        self._fds = None
        self._adopted = None

    # -- running ------------------------------------------------------------------------------

    def run(self):
        self.channel.send({"type": "hello", "pid": os.getpid()})
        self.session.workflow_ident = get_ident()
        self._ahead()
        try:
            start = self.channel.read()
            if start is None:
                self._exit(1)
            check_start(start)
            faults.mark("start")
        except errors.ProtocolError as e:
            self.finish(error=exc_text(e))
        if start["reuse"] and not start["durable"]:
            reuse.serve(self, start)  # never returns
        self.channel.start_reader(self.prepared and self.prepared.reader)
        self.capture(self.session.emit_print)
        self.run_one(start)

    def run_one(self, start):
        """One session from its `start` to `done` (a reused process runs one after the other)."""
        self.session.begin(start)
        value = None
        try:
            handler, event = self._load(start)
            value = invoke(handler, event, start["session_id"])
            if start["event"].get("event_type") != "start":
                value = None  # only a session made by start() has a parent to tell
        except SystemExit as e:
            if e.code not in (None, 0):
                self.finish(error=f"SystemExit: {e.code}", tb=format_exception(e))
        except BaseException as e:
            pad_args(e)
            error, tb = limits.explain(e, exc_text(e)), format_exception(e)
            # The handler's locals go now: files it held open (EMFILE) are closed before reporting.
            traceback.clear_frames(e.__traceback__)
            self.finish(error=error, tb=tb)
        self.finish(value=value)

    def _ahead(self):
        """While `start` is on its way: the hook, the warm modules, the loop policy (see ahead.py)."""
        session = self.session
        session.activities = Activities(session)
        self._adopted = warm.adopt_ahead(session.activities)
        asyncio.set_event_loop_policy(ClockedLoopPolicy(self.clock, session.workflow_ident))
        if self.prepared is None:
            ahead.rehearse()

    def capture(self, sink):
        """fds 1 and 2 to `sink` (this session's prints, or a reused process's, reuse.py)."""
        if self.prepared is not None:
            self._fds = self.prepared.fds
            self._fds.attach(sink)
        else:
            self._fds = FdCapture(sink)
        self.streams()

    def streams(self):
        """sys.stdout and sys.stderr, new for each session."""
        emit = self.session.emit_print
        sys.stdout = LineWriter("stdout", 1, emit)
        sys.stderr = LineWriter("stderr", 2, emit)
        self._writers = [sys.stdout, sys.stderr]

    def _load(self, start):
        project_dir = os.path.realpath(start["project_dir"])
        entry_file, func_name = parse_entry(start["entry"])
        os.chdir(project_dir)
        self.limit = float(start["workflow_timeout"])
        (self.reuse or self).setup(start["env"], project_dir)
        event = event_from_wire(start["event"])
        track_imports(self.clock, self.session.workflow_ident)
        self.clock.resume()
        began = time.thread_time()  # CPU, not the wall: a busy machine's waits are no import's cost
        handler = import_handler(start["entry"], entry_file, func_name)
        if self.reuse is not None:
            self.reuse.imported(time.thread_time() - began)
        return handler, event

    def setup(self, env, project_dir):
        """The session's vars, its import hook and its watchdog (a reused process: reuse.py)."""
        os.environ.update(env)
        self.hook(project_dir)
        standby = self.prepared and self.prepared.watchdog
        start_watchdog(self.clock, self.limit, self.timed_out, standby, self.session.tell_running)

    def hook(self, project_dir):
        activities = self.session.activities
        finder = warm.install_hook(activities, project_dir, self._adopted)
        activities.in_project_file = finder.contains

    def timed_out(self):
        if self.clock.over(self.limit) == "import":
            self.fatal(
                errors.WorkflowTimeoutError(
                    f"importing modules took more than {import_limit(self.limit):g} s (the import "
                    f"bound, {IMPORT_FACTOR} times the workflow code's); a module that does slow work "
                    "when imported (a network call, a large download) should do it in a function"
                )
            )
        self.fatal(
            errors.WorkflowTimeoutError(
                f"workflow code ran for more than {self.limit:g} s outside an activity; move long-running "
                "work (network calls, sleeps, heavy computation) into a function decorated with "
                "@workflow_sdk.activity"
            )
        )

    # -- ending -------------------------------------------------------------------------------

    def _workflow_stack(self):
        frame = sys._current_frames().get(self.session.workflow_ident)
        if frame is None:
            return ""
        return "Traceback (most recent call last):\n" + "".join(
            traceback.format_list(user_frames(traceback.extract_stack(frame)))
        )

    def fatal(self, err):
        """End the session now with `err`, whatever thread calls this (never returns)."""
        stack = self._workflow_stack()
        self.finish(
            error=limits.explain(err, exc_text(err)),
            tb=stack + "".join(traceback.format_exception_only(type(err), err)),
        )

    def finish(self, error=None, tb=None, value=None):
        """Report the end and exit; a reused process that may stay returns instead (reuse.py)."""
        with self._finishing:  # a second caller waits here until the first one exits the process
            for writer in self._writers:
                writer.flush_all()
            stay = error is None and self.reuse is not None and self.reuse.settle()
            if self._fds is not None and not stay:
                self._fds.drain()
            msg = {"type": "done", "ok": error is None}
            if error is not None:
                msg.update(error=error, traceback=tb or "")
            elif value is not None:
                msg.update(wire_result(value))
            if stay:
                msg["reuse"] = True
            elif self.reuse is not None and self.reuse.slow:
                msg["slow_import"] = True
            faults.mark("done")
            faults.write()
            self.channel.send(msg)
            if stay:
                return
            self._exit(0 if error is None else 1)


def run_session(sock, exit=os._exit, prepared=None):
    """Run the session that arrives on `sock` (never returns: the process exits at its end)."""
    process = SessionProcess(sock, exit, prepared)
    seam.current = process.session
    process.run()
