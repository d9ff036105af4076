"""The test backend's answers to the requests the service serves (`call_service(kind, fields)`).

The store is the test's `store=` dict (plain Python values, changed in place, so the test reads
it afterwards); `start()` and `signal()` are recorded, not run; `next_signal` takes the test's
queued `signals=`; `outcome(value)` is recorded; `get_webhook_url` reads `webhook_urls=`.

>>> s = SdkCalls(store={"hits": 1})
>>> s.call_service("store", {"op": "add", "key": "hits", "args": [2]}), s.store
(3, {'hits': 3})
"""

from collections.abc import Mapping
from dataclasses import dataclass

from .. import values
from ..errors import AutoKittehError
from .events import new_id

__all__ = ["SdkCalls", "SentSignal", "StartCall"]

MAX_VALUE_BYTES = 64 * 1024  # as the service's store
PUBLIC_BASE = "http://127.0.0.1:9980"


@dataclass
class StartCall:
    """One `start()`: where, with what, and the id it returned (the session is not run)."""

    loc: str
    data: dict
    memo: dict
    project: str
    session_id: str


@dataclass
class SentSignal:
    """One `signal()` call."""

    session_id: str
    name: str
    payload: object


def _queue(signals):
    """`signals=`: a list of `(name, payload)` pairs, `Signal`s or `{"name", "payload"}` dicts."""
    out = []
    for s in signals or []:
        if isinstance(s, Mapping):
            name, payload = s.get("name"), s.get("payload")
        elif isinstance(s, tuple) and len(s) == 2:
            name, payload = s
        elif hasattr(s, "name"):
            name, payload = s.name, getattr(s, "payload", None)
        else:
            raise TypeError(f"signals: expected (name, payload) pairs or Signal objects, got {s!r}")
        if not isinstance(name, str) or not name:
            raise TypeError(f"signals: a signal name is a non-empty string, got {name!r}")
        out.append((name, payload))
    return out


class SdkCalls:
    """A mixin of the test backend: what the service would answer, from memory."""

    def __init__(self, store=None, signals=None, webhook_urls=None, session_id=None):
        self.store = {} if store is None else store
        self.published = set()
        self.queued_signals = _queue(signals)
        self.webhook_urls = dict(webhook_urls or {})
        self.session_id = session_id
        self.started, self.signals_sent, self.next_signals = [], [], []
        self.outcome_values = []
        self.sdk_warnings = []

    def call_service(self, kind, fields):
        serve = getattr(self, "_sdk_" + kind, None)
        if serve is None:
            raise RuntimeError(f"{kind}: not served by the testing kit")
        return serve(**fields)

    # -- store (values kept as Python values in the test's dict) ----------------------------

    def _sdk_store(self, op, args, key=None):
        args = [values.decode(a) for a in args]
        if op == "get":
            return values.encode(self.store.get(key))
        if op in ("set", "check_and_set"):
            if op == "check_and_set" and self.store.get(key) != args[0]:
                return False
            value = args[-1]
            if value is None:
                self._sdk_store("del", [], key)
            else:
                size = len(str(values.encode(value)).encode())
                if size > MAX_VALUE_BYTES:
                    raise AutoKittehError(
                        f'store: value of "{key}" is about {size} bytes, '
                        f"over the limit of {MAX_VALUE_BYTES} bytes per value"
                    )
                self.store[key] = value
            return True if op == "check_and_set" else None
        if op == "del":
            self.store.pop(key, None)
            self.published.discard(key)
            return None
        if op == "add":
            current = self.store.get(key)
            if current is not None and (isinstance(current, bool) or not isinstance(current, (int, float))):
                raise TypeError(f'add_values: "{key}" does not hold a number')
            self.store[key] = args[0] if current is None else current + args[0]
            return values.encode(self.store[key])
        if op == "list_keys":
            return sorted(self.store)
        if op == "publish":
            if key not in self.store:
                raise ValueError(f'store: no value under "{key}" to publish')
            self.published.add(key)
            return None
        if op == "unpublish":
            self.published.discard(key)
            return None
        if op == "public_url":
            return f"{PUBLIC_BASE}/store/prj_testing"
        raise ValueError(f"store: unknown op {op!r}")

    # -- sessions and signals ---------------------------------------------------------------

    def _sdk_start_session(self, loc, data, memo=None, project=""):
        if project:
            raise ValueError(
                f'start: sessions start only in their own project; project "{project}" is not it '
                '(use project="")'
            )
        call = StartCall(loc, values.decode(data), dict(memo or {}), project, new_id("ses"))
        self.started.append(call)
        return call.session_id

    def _sdk_signal(self, session_id, name, payload=None):
        decoded = values.decode(payload)
        self.signals_sent.append(SentSignal(session_id, name, decoded))
        if session_id == self.session_id:  # to itself: its own next_signal gets it
            self.queued_signals.append((name, decoded))
        return None

    def _sdk_next_signal(self, names, timeout=None):
        found = None
        for i, (name, payload) in enumerate(self.queued_signals):
            if name in names:
                del self.queued_signals[i]
                found = {"name": name, "payload": values.encode(payload)}
                break
        if found is None and timeout is None:
            self.sdk_warnings.append(
                "next_signal without a timeout found no queued signal: the service would wait for ever; "
                "the testing kit returned None"
            )
        self.next_signals.append((list(names), timeout, found and found["name"]))
        return found

    # -- outcome values and URLs ------------------------------------------------------------

    def _sdk_outcome_value(self, value=None):
        self.outcome_values.append(values.decode(value))
        return None

    def _sdk_webhook_url(self, trigger):
        if trigger not in self.webhook_urls:
            raise ValueError(
                f'get_webhook_url: no trigger named "{trigger}" '
                "(the testing kit knows those in webhook_urls=)"
            )
        return self.webhook_urls[trigger]
