"""One session as the SDK and the activities see it: its steps, requests, outcomes and prints.

`Session` is what `workflow_sdk.seam.current` holds in a session's process. It speaks the
protocol's session messages over the process's channel and ends a session through the process's
`fatal`; starting, capturing output, limits and the end of the process are `process.py`'s. See
README.md.
"""

import base64
import itertools
import json
import threading
import time
from _thread import get_ident

from .. import seam
from ..event import event_from_wire
from ..retry import RetryPolicy
from . import replay_check
from .replay import Replay, reply_error

__all__ = ["Session"]


# An activity still running after this (s) gets its row in flight; a shorter one ends first.
TELL_AFTER = 0.05


class Session:
    def __init__(self, channel, clock, fatal):
        self.channel = channel
        self.clock = clock  # the workflow clock, paused while a reply is awaited
        self.fatal = fatal  # ends the session now with an error, from any thread (never returns)
        self.workflow_ident = None
        self.durable = False
        self.pickle_values = False  # activity values through pickle (durable, or a v2 manifest)
        self.replay = Replay()
        self.printed_before = 0  # workflow prints the earlier runs logged (a resumed durable session)
        self.prints_seen = 0
        self.retry = None  # the trigger's RetryPolicy for activities without their own (retrying.py)
        self.checking = False  # a replay check: every step is the journal's, nothing runs (replay_check.py)
        self.activities = None
        self._report_prefix = {}
        self._activity_ids = itertools.count(1)  # next() is atomic: activities start on many threads
        self._untold = {}  # activities running, not told yet: number -> (name, monotonic start)
        self._told_lock = threading.Lock()  # a start is sent before the report that ends it

    def begin(self, start):
        """The kind of session `start` begins (a reused process begins one after the other)."""
        self.durable = start["durable"]
        self._untold.clear()  # an earlier session's activity left behind is never told as this one's
        self.pickle_values = self.durable or bool(start.get("pickle_values"))
        self.replay = Replay(len(start["journal"]) if self.durable else 0)
        # The workflow code's prints the earlier runs logged: a resumed run prints none of them
        # again (replayed code, and live code after the last journaled step that ran before).
        self.printed_before = start.get("printed", 0) if self.durable else 0
        self.prints_seen = 0
        self.retry = RetryPolicy.from_wire(start.get("retry"))
        if start.get("check"):
            self.checking, self.replay = True, replay_check.begin()

    # -- what the SDK calls (see workflow_sdk/seam.py) ------------------------------------------

    def in_workflow(self):
        acts = self.activities
        return get_ident() == self.workflow_ident and not acts._importing and not acts.inline

    def in_activity(self):
        return seam.in_activity_thread()

    @property
    def replaying(self):
        return self.replay.replaying

    def next_step(self):
        """The next step's number (durable sessions; None otherwise); the service checks the step
        it numbers, by the message that carries the number."""
        return self.replay.take() if self.durable else None

    def replaying_step(self, seq):
        return self.replay.on_record(seq)

    def replay_activity(self, seq, name, args=None):
        """The journal's record of activity step `seq`, as the service answers it (replay.py)."""
        args = {} if args is None else {"args": args}  # a replay check compares the arguments too
        return self._request({"type": "replay_activity", "seq": seq, "function": name, **args})

    def report_started(self, name):
        """Activity `name` runs live now: numbered, and told to the service once it has run
        TELL_AFTER (`tell_running`); returns its number, which the report that ends it carries.
        Not journaled: a replayed activity does not run and is never told."""
        n = next(self._activity_ids)
        self._untold[n] = (name, time.monotonic())
        return n

    def tell_running(self):
        """The watchdog's tick: each activity running past TELL_AFTER gets its row in flight
        (`activity_started`, how long it has run so far), once; a shorter one only its report."""
        if not self._untold:
            return
        now = time.monotonic()
        for n, (name, began) in list(self._untold.items()):
            if now - began < TELL_AFTER:
                continue
            with self._told_lock:
                if self._untold.pop(n, None) is not None:
                    ms = round((now - began) * 1000, 3)
                    self.channel.send(
                        {"type": "activity_started", "id": n, "function": name, "running_ms": ms}
                    )

    def report_activity(self, name, duration_ms, error, retry=None, started=None):
        """An activity (or one attempt of it) ended; `started`: its number, on the report that ends it."""
        if started is not None and self._untold:
            with self._told_lock:  # told now or never: its start goes first
                self._untold.pop(started, None)
        # The hot path (no error, no retry policy): format by hand, json.dumps costs more than the activity.
        if error is None and retry is None:
            function = self._report_prefix.get(name)
            if function is None:
                function = self._report_prefix[name] = json.dumps(name).encode()
            n = b"" if started is None else b',"id":%d' % started
            self.channel.send_raw(
                b'{"type":"activity"%s,"function":%s,"duration_ms":%.3f,"ok":true}\n'
                % (n, function, duration_ms)
            )
            return
        msg = {
            **({} if started is None else {"id": started}),
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
        seq = self.next_step()
        body = outcome["body"]
        self.channel.send(
            _numbered(
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
        seq = self.next_step()
        return self._request(_numbered({"type": kind, **fields}, seq))

    def unjournaled_request(self, msg):
        """A request the service answers at once and never journals, from any thread (an
        activity's too): `encode_jwt`, whose answer a replay must not reuse."""
        return self._request(msg)

    def refresh_oauth(self, integration, connection):
        """A connection's token refreshed by the service: allowed in activities, never journaled
        (a replay asks again), so it carries no step number."""
        return self._request({"type": "refresh_oauth", "integration": integration, "connection": connection})

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
        # Only the workflow thread's prints are made again by a replay: an activity's (run once,
        # its result journaled) and a child process's (fd capture) are sent as they come.
        if get_ident() != self.workflow_ident:
            self.channel.send({"type": "print", "text": text, "stream": stream, "outside": True})
            return
        self.prints_seen += 1
        if not self.replaying and self.prints_seen > self.printed_before:
            self.channel.send({"type": "print", "text": text, "stream": stream})


def _numbered(msg, seq):
    # Durable steps carry their number: with activities finishing out of order (asyncio.gather)
    # the service cannot count steps by arrival.
    if seq is not None:
        msg["seq"] = seq
    return msg
