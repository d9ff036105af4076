"""The service side of the SDK requests, scripted: a store in a dict, sessions, signals, URLs."""

import json

from workflow_sdk import values

SDK_KINDS = ("store", "start_session", "signal", "next_signal", "outcome_value", "webhook_url")
VALUE_LIMIT = 200  # bytes of a value's wire JSON; small, so a test can exceed it


def _ok(value=None):
    return {"ok": True, "value": value}


def _err(error, message):
    return {"ok": False, "error": error, "message": message}


class ScriptedSdk:
    """Answers store/start/signal/next_signal/outcome_value/webhook_url and records what it got."""

    def __init__(self, signals=()):
        self.kv = {}  # key -> wire value
        self.published = set()
        self.started = []
        self.sent_signals = []
        self.signals = list(signals)  # [{"name", "payload"}], delivered in order
        self.outcome_values = []

    def answer_sdk(self, msg):
        kind = msg["type"]
        if kind == "store":
            return self._store(msg["op"], msg.get("key"), msg["args"])
        if kind == "start_session":
            self.started.append(msg)
            return _ok(f"ses_started{len(self.started)}")
        if kind == "signal":
            self.sent_signals.append(msg)
            return _ok()
        if kind == "next_signal":
            for i, sig in enumerate(self.signals):
                if sig["name"] in msg["names"]:
                    return _ok(self.signals.pop(i))
            return _ok(None)
        if kind == "outcome_value":
            self.outcome_values.append(msg["value"])
            return _ok()
        if msg["trigger"] != "hook":
            return _err("ValueError", f"no trigger named {msg['trigger']!r}")
        return _ok("http://127.0.0.1:9980/webhooks/0123456789abcdefghijklmnop")

    def _store(self, op, key, args):
        if op in ("set", "add", "check_and_set"):
            size = len(json.dumps(args[-1]))
            if size > VALUE_LIMIT:
                return _err(
                    "AutoKittehError",
                    f"store: value of {key!r} is {size} bytes, over the limit of {VALUE_LIMIT}",
                )
        if op == "get":
            return _ok(self.kv.get(key))
        if op == "set":
            if args[0] is None:
                self.kv.pop(key, None)
            else:
                self.kv[key] = args[0]
            return _ok()
        if op == "del":
            self.kv.pop(key, None)
            return _ok()
        if op == "add":
            current, add = values.decode(self.kv.get(key)), values.decode(args[0])
            if current is not None and (isinstance(current, bool) or not isinstance(current, (int, float))):
                return _err("TypeError", f"store: {key!r} holds a {type(current).__name__}, not a number")
            self.kv[key] = values.encode(add if current is None else current + add)
            return _ok(self.kv[key])
        if op == "check_and_set":
            if self.kv.get(key) != args[0]:
                return _ok(False)
            self._store("set", key, [args[1]])
            return _ok(True)
        if op == "list_keys":
            return _ok(sorted(self.kv))
        if op == "publish":
            if key not in self.kv:
                return _err("ValueError", f"store: no key {key!r} to publish")
            self.published.add(key)
            return _ok()
        if op == "unpublish":
            self.published.discard(key)
            return _ok()
        return _ok("http://127.0.0.1:9980/store/prj_x")  # public_url
