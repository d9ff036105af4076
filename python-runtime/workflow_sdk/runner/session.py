"""One session in one child process: start → import → handler → done. See README.md."""

import asyncio
import base64
import json
import os
import sys
import threading
import traceback
from _thread import get_ident

from .. import errors
from ..event import event_from_wire
from ..retry import RetryPolicy
from . import ahead, limits, replay_check, reuse, state, warm
from .activities import Activities
from .capture import FdCapture, LineWriter
from .handler import import_handler, invoke, parse_entry, wire_result
from .protocol import Channel, check_start
from .replay import Replay, reply_error
from .tracebacks import exc_text, format_exception, user_frames
from .watchdog import Clock, ClockedLoopPolicy, start_watchdog


class Session:
    def __init__(self, sock, exit=os._exit, prepared=None):
        self._prepared = prepared
        self._exit = exit
        self.channel = Channel(sock, on_lost=lambda: exit(1), on_stop=lambda: exit(0), on_bad=self.fatal)
        self.workflow_ident = None
        self.clock = Clock()
        self.durable = False
        self.pickle_values = False  # activity values through pickle (durable, or a v2 manifest)
        self.replay = Replay()
        self.retry = None  # the trigger's RetryPolicy for activities without their own (retrying.py)
        self.checking = False  # a replay check: every step is the journal's, nothing runs (replay_check.py)
        self._finishing = threading.Lock()
        self._writers = []
        self._fds = None
        self._report_prefix = {}
        self.activities = None
        self._adopted = None
        self.reuse = None  # a reused process's sessions after sessions (reuse.py); None: one session

    # -- what the SDK calls -------------------------------------------------------------------

    def in_workflow(self):
        acts = self.activities
        return get_ident() == self.workflow_ident and not acts._importing and not acts.inline

    def in_activity(self):
        return state.in_activity_thread()

    @property
    def replaying(self):
        return self.replay.replaying

    def next_step(self, kind, name=None):
        """Take the next step number (durable sessions; None otherwise); the service checks the step."""
        return self.replay.take() if self.durable else None

    def replaying_step(self, seq):
        return self.replay.on_record(seq)

    def replay_activity(self, seq, name, args=None):
        """The journal's record of activity step `seq`, as the service answers it (replay.py)."""
        args = {} if args is None else {"args": args}  # a replay check compares the arguments too
        return self._request({"type": "replay_activity", "seq": seq, "function": name, **args})

    def report_activity(self, name, duration_ms, error, retry=None):
        if (
            error is None and retry is None
        ):  # the hot path: format by hand, json.dumps costs more than the activity
            prefix = self._report_prefix.get(name)
            if prefix is None:
                function = json.dumps(name)
                prefix = self._report_prefix[name] = (
                    f'{{"type":"activity","function":{function},"duration_ms":'
                )
            self.channel.send_raw(b'%s%.3f,"ok":true}\n' % (prefix.encode(), duration_ms))
            return
        msg = {
            "type": "activity",
            "function": name,
            "duration_ms": round(duration_ms, 3),
            "ok": False,
            "error": error,
        }
        if retry is not None:  # an attempt under a retry policy (retrying.py)
            msg.update(ok=error is None, retry=retry)
        self.channel.send(msg)

    def record_step(self, step):
        self.channel.send_step(step)

    def outcome(self, outcome):
        # Sent in a replay too: the service matches it against the journal and does not answer twice.
        seq = self.next_step("outcome")
        body = outcome["body"]
        self.channel.send(
            self._numbered(
                {
                    "type": "outcome",
                    "status_code": outcome["status_code"],
                    "headers": outcome["headers"],
                    "body": None if body is None else base64.b64encode(body).decode(),
                    "more": outcome["more"],
                    **({"event_id": outcome["event_id"]} if "event_id" in outcome else {}),
                },
                seq,
            )
        )

    @staticmethod
    def _numbered(msg, seq):
        # Durable steps carry their number: with activities finishing out of order (asyncio.gather)
        # the service cannot count steps by arrival.
        if seq is not None:
            msg["seq"] = seq
        return msg

    def _request(self, msg):
        self.clock.pause()
        try:
            reply = self.channel.request(msg)
        finally:
            self.clock.resume()
        if reply["ok"]:
            return reply.get("value")
        raise reply_error(reply["error"], reply["message"])

    def call_service(self, kind, fields):
        """A request the service answers (and journals, when durable; a replay's from the journal)."""
        seq = self.next_step(kind)
        return self._request(self._numbered({"type": kind, **fields}, seq))

    def subscribe(self, name, filter):
        return self.call_service("subscribe", {"name": name, "filter": filter})

    def next_event(self, ids, timeout):
        value = self.call_service("next_event", {"ids": ids, "timeout": timeout})
        return None if value is None else event_from_wire(value)

    def durable_sleep(self, seconds):
        """time.sleep in a durable session's workflow code: a timer the service keeps.

        The service may release this process while the timer runs and resume the session by
        replay when it fires; a replay passes a fired timer at once.
        """
        seconds = float(seconds)
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self.call_service("sleep", {"seconds": seconds})

    def unsubscribe(self, id):
        self.call_service("unsubscribe", {"id": id})

    def emit_print(self, text, stream):
        if not self.replaying:
            self.channel.send({"type": "print", "text": text, "stream": stream})

    # -- ending -------------------------------------------------------------------------------

    def _workflow_stack(self):
        frame = sys._current_frames().get(self.workflow_ident)
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
            self.channel.send(msg)
            if stay:
                return
            self._exit(0 if error is None else 1)

    # -- running ------------------------------------------------------------------------------

    def run(self):
        self.channel.send({"type": "hello", "pid": os.getpid()})
        self.workflow_ident = get_ident()
        self._ahead()
        try:
            start = self.channel.read()
            if start is None:
                self._exit(1)
            check_start(start)
        except errors.ProtocolError as e:
            self.finish(error=exc_text(e))
        if start["reuse"] and not start["durable"]:
            reuse.serve(self, start)  # never returns
        self.channel.start_reader(self._prepared and self._prepared.reader)
        self._capture(self.emit_print)
        self._run(start)

    def _run(self, start):
        """One session from its `start` to `done` (a reused process runs one after the other)."""
        self.durable = start["durable"]
        self.pickle_values = self.durable or bool(start.get("pickle_values"))
        self.replay = Replay(len(start["journal"]) if self.durable else 0)
        self.retry = RetryPolicy.from_wire(start.get("retry"))
        if start.get("check"):
            self.checking, self.replay = True, replay_check.begin()
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
            error, tb = limits.explain(e, exc_text(e)), format_exception(e)
            # The handler's locals go now: files it held open (EMFILE) are closed before reporting.
            traceback.clear_frames(e.__traceback__)
            self.finish(error=error, tb=tb)
        self.finish(value=value)

    def _ahead(self):
        """While `start` is on its way: the hook, the warm modules, the loop policy (see ahead.py)."""
        self.activities = Activities(self)
        self._adopted = warm.adopt_ahead(self.activities)
        asyncio.set_event_loop_policy(ClockedLoopPolicy(self.clock, self.workflow_ident))
        if self._prepared is None:
            ahead.rehearse()

    def _capture(self, sink):
        """fds 1 and 2 to `sink` (this session's prints, or a reused process's, reuse.py)."""
        if self._prepared is not None:
            self._fds = self._prepared.fds
            self._fds.attach(sink)
        else:
            self._fds = FdCapture(sink)
        self._streams()

    def _streams(self):  # sys.stdout and sys.stderr, new for each session
        sys.stdout = LineWriter("stdout", 1, self.emit_print)
        sys.stderr = LineWriter("stderr", 2, self.emit_print)
        self._writers = [sys.stdout, sys.stderr]

    def _load(self, start):
        project_dir = os.path.realpath(start["project_dir"])
        entry_file, func_name = parse_entry(start["entry"])
        os.chdir(project_dir)
        self._limit = float(start["workflow_timeout"])
        (self.reuse or self).setup(start["env"], project_dir)
        event = event_from_wire(start["event"])
        self.clock.resume()
        return import_handler(start["entry"], entry_file, func_name), event

    def setup(self, env, project_dir):
        """The session's vars, its import hook and its watchdog (a reused process: reuse.py)."""
        os.environ.update(env)
        self.hook(project_dir)
        start_watchdog(self.clock, self._limit, self._timed_out, self._prepared and self._prepared.watchdog)

    def hook(self, project_dir):
        finder = warm.install_hook(self.activities, project_dir, self._adopted)
        self.activities.in_project_file = finder.contains

    def _timed_out(self):
        self.fatal(
            errors.WorkflowTimeoutError(
                f"workflow code ran for more than {self._limit:g} s outside an activity; move long-running "
                "work (network calls, sleeps, heavy computation) into a function decorated with "
                "@workflow_sdk.activity"
            )
        )


def run_session(sock, exit=os._exit, prepared=None):
    session = Session(sock, exit, prepared)
    state.current = session
    session.run()
