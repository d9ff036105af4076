"""NDJSON framing over the session socket, and checks on every message from the service.

Child → service: hello, print, activity, outcome, step (durable), done, and the requests (with
`req`, answered by a `reply`): subscribe, next_event, unsubscribe, sleep, store, start, signal,
next_signal, outcome_value, webhook_url. Service → child: start (first), reply, ack, stop.
"""

import json
import os
import threading

from ..errors import ProtocolError
from . import standby as standby_module

STEP_KINDS = ("activity", "subscribe", "next_event", "unsubscribe", "outcome", "sleep")
# Requests of the SDK surface (store, sessions, signals, outcome values, webhook URLs): journaled
# by the service like subscribe, `{"seq", "kind", "value"}` or `{"seq", "kind", "error", "message"}`.
SDK_REQUEST_KINDS = ("store", "start", "signal", "next_signal", "outcome_value", "webhook_url")
STEP_KINDS += SDK_REQUEST_KINDS


def encode(msg):
    return (json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def decode(line):
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise ProtocolError(f"malformed message from the service: {e}") from None
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise ProtocolError("message from the service has no type")
    return msg


def _need(msg, key, types, what):
    value = msg.get(key)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise ProtocolError(f"{msg.get('type')} message: {key} must be {what}")
    return value


def _tuple(types):
    return types if isinstance(types, tuple) else (types,)


def check_start(msg):
    """Validate a `start` message in place; returns it."""
    if msg.get("type") != "start":
        raise ProtocolError(f"expected a start message, got {msg.get('type')!r}")
    _need(msg, "session_id", str, "a string")
    project_dir = _need(msg, "project_dir", str, "a string")
    if not os.path.isabs(project_dir):
        raise ProtocolError("start message: project_dir must be absolute")
    entry = _need(msg, "entry", str, "a string")
    if ":" not in entry:
        raise ProtocolError("start message: entry must be <file.py>:<function>")
    event = _need(msg, "event", dict, "an object")
    if not isinstance(event.get("data"), dict):
        raise ProtocolError("start message: event.data must be an object")
    env = msg.setdefault("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ProtocolError("start message: env must map strings to strings")
    if not isinstance(msg.setdefault("durable", False), bool):
        raise ProtocolError("start message: durable must be a boolean")
    timeout = msg.get("workflow_timeout")
    if timeout is None:
        msg["workflow_timeout"] = 10.0
    elif isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ProtocolError("start message: workflow_timeout must be a positive number")
    journal = msg.setdefault("journal", [])
    if not isinstance(journal, list):
        raise ProtocolError("start message: journal must be a list")
    for i, step in enumerate(journal):
        if not isinstance(step, dict) or step.get("seq") != i or step.get("kind") not in STEP_KINDS:
            raise ProtocolError(f"start message: journal step {i} must be an object with seq {i} and a known kind")
        if step["kind"] == "activity" and not isinstance(step.get("function"), str):
            raise ProtocolError(f"start message: journal step {i} has no function")
        if step["kind"] == "activity" and not isinstance(step.get("result", step.get("error")), str):
            raise ProtocolError(f"start message: journal step {i} needs result or error (base64 pickle)")
    return msg


def check_incoming(msg):
    """Validate a message that may arrive after `start`."""
    kind = msg.get("type")
    if kind == "reply":
        _need(msg, "req", int, "an integer")
        if _need(msg, "ok", bool, "a boolean") is False:
            _need(msg, "error", str, "a string")
            msg.setdefault("message", "")
    elif kind == "ack":
        _need(msg, "seq", int, "an integer")
    elif kind != "stop":
        raise ProtocolError(f"unknown message type {kind!r} from the service")
    return msg


class Channel:
    """One session's socket: thread-safe sends; a reader thread hands replies and acks to waiters."""

    def __init__(self, sock, on_lost, on_stop, on_bad):
        self._sock = sock
        self._file = sock.makefile("rb")
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting = {}  # ("reply", req) | ("ack", seq) -> [threading.Event, message]
        self._next_req = 0
        self._on_lost, self._on_stop, self._on_bad = on_lost, on_stop, on_bad

    def send(self, msg):
        self.send_raw(encode(msg))

    def send_raw(self, data):
        try:
            with self._send_lock:
                self._sock.sendall(data)
        except OSError:
            self._on_lost()

    def read(self):
        """Read one message on the calling thread (used for `start`); None on EOF."""
        line = self._file.readline()
        return decode(line) if line else None

    def start_reader(self, standby=None):
        standby_module.start(self._read_loop, "hl-reader", standby)

    def _read_loop(self):
        while True:
            try:
                line = self._file.readline()
            except OSError:
                line = b""
            if not line:
                self._on_lost()
                return
            try:
                msg = check_incoming(decode(line))
                if msg["type"] == "stop":
                    self._on_stop()
                    return
                key = ("reply", msg["req"]) if msg["type"] == "reply" else ("ack", msg["seq"])
                with self._lock:
                    slot = self._waiting.pop(key, None)
                if slot is None:
                    raise ProtocolError(f"unexpected {key[0]} {key[1]} from the service")
            except ProtocolError as e:
                self._on_bad(e)
                return
            slot[1] = msg
            slot[0].set()

    def _expect(self, key):
        slot = [threading.Event(), None]
        with self._lock:
            self._waiting[key] = slot
        return slot

    def request(self, msg):
        """Send a request with a fresh `req` and block until its reply arrives."""
        with self._lock:
            self._next_req += 1
            req = self._next_req
        slot = self._expect(("reply", req))
        self.send({**msg, "req": req})
        slot[0].wait()
        return slot[1]

    def send_step(self, step):
        """Send a durable step and block until the service acks it."""
        slot = self._expect(("ack", step["seq"]))
        self.send({"type": "step", **step})
        slot[0].wait()
