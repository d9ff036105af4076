"""NDJSON framing over the session socket, and checks on every message from the service.

The messages, both directions, are defined once in `protocol.json` beside this file; `schema`
checks them against it. Child → service: hello, print, activity, outcome,
subscribe/next_event/unsubscribe/sleep (with `req`), step (durable), done. Service → child: start
(first; a reused process gets one after each `done` with `reuse`), reply, ack, stop.
"""

import base64
import json
import threading

from ..errors import ProtocolError
from . import schema
from . import standby as standby_module


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


def check_start(msg):
    """Validate a `start` message in place (defaults filled in); returns it."""
    if msg.get("type") != "start":
        raise ProtocolError(f"expected a start message, got {msg.get('type')!r}")
    return schema.validate(msg, "to_child")


def check_incoming(msg):
    """Validate a message that may arrive after `start`."""
    kind = msg.get("type")
    if kind == "start" or kind not in schema.messages("to_child"):
        raise ProtocolError(f"unknown message type {kind!r} from the service")
    return schema.validate(msg, "to_child")


class Channel:
    """One session's socket: thread-safe sends; a reader thread hands replies and acks to waiters."""

    def __init__(self, sock, on_lost, on_stop, on_bad):
        self._sock = sock
        self._file = sock.makefile("rb")
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting = {}  # ("reply", req) | ("ack", seq) -> [threading.Event, message]
        self._parts = {}  # seq -> the parts of its value kept apart, before its reply (apart.py)
        self._next_req = 0
        self._on_lost, self._on_stop, self._on_bad = on_lost, on_stop, on_bad
        # A reused process (reuse.py) takes its next `start` here; else a second one is refused.
        self.on_start = None

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
                msg = decode(line)
                if msg["type"] == "start" and self.on_start is not None:
                    self.on_start(check_start(msg))
                    continue
                msg = check_incoming(msg)
                if msg["type"] == "stop":
                    self._on_stop()
                    return
                if msg["type"] == "replay_part":
                    self._parts.setdefault(msg["seq"], []).append(base64.b64decode(msg["data"]))
                    continue
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

    def take_parts(self, seq):
        """The parts of replayed step `seq`'s value kept apart (they came before its reply)."""
        return self._parts.pop(seq, [])

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
