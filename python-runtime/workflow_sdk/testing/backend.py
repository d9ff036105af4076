"""The test backend: what `workflow_sdk.seam.current` is while a handler runs under test.

It answers the SDK's calls (see the seam described in `workflow_sdk/seam.py`) from
memory and records them: outcomes, subscriptions, `next_event` calls, activities.

>>> from workflow_sdk.testing import event
>>> b = Backend(events={"decisions": [event(json={"ok": True})]})
>>> sub = b.subscribe("decisions", "")
>>> b.next_event([sub], 0).data.body.json, b.next_event([sub], 0)
({'ok': True}, None)
"""

import asyncio
import inspect
import json as _json
import pickle
import time
from _thread import get_ident
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .. import seam
from ..event import Headers, event_from_wire
from ..runner.activities import _pickle_error, _unpicklable
from .events import new_id, to_wire
from .service import SdkCalls

__all__ = ["ActivityCall", "Backend", "Fatal", "NextEvent", "Outcome", "Subscription"]

ACTIVITY_THREADS = 8  # as many as the runner's pool


@dataclass
class Outcome:
    """One `http_outcome` call. `sent` is True for the one that answers a synchronous request.

    >>> Outcome(201, Headers({"Content-Type": "application/json"}), b'{"id":1}', False).json
    {'id': 1}
    """

    status: int
    headers: Headers
    body: "bytes | None"
    more: bool
    sent: bool = False

    @property
    def status_code(self):
        """`status`, under `http_outcome`'s name for it."""
        return self.status

    @property
    def text(self):
        """The body as text ("" without a body)."""
        return "" if self.body is None else self.body.decode("utf-8", errors="replace")

    @property
    def json(self):
        """The body parsed as JSON (None without a body; ValueError if it is not JSON)."""
        return None if self.body is None else _json.loads(self.body)


@dataclass
class Subscription:
    """One `subscribe` call: the id it returned, and whether `unsubscribe` ended it."""

    id: str
    name: str
    filter: str
    active: bool = True


@dataclass
class NextEvent:
    """One `next_event` call: the ids, the timeout in seconds (None: no limit), what it returned."""

    ids: list
    timeout: "float | None"
    event: object


@dataclass
class ActivityCall:
    """One activity: its name (`module.function`), arguments, and result or exception."""

    name: str
    args: tuple
    kwargs: dict
    result: object = None
    error: "BaseException | None" = None
    duration_ms: float = 0.0

    @property
    def ok(self):
        return self.error is None


class Fatal(BaseException):
    """Carries an error that ends the session even if the handler catches it (UnpicklableError).

    A BaseException, so `except Exception` in the handler does not stop it, as in the service.
    """

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _wire_queue(events):
    if events is None:
        return {}
    if not isinstance(events, Mapping):
        raise TypeError("events must map a trigger name to a list of events")
    queued = {}
    for name, items in events.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"events: {name!r} is not a trigger name")
        if isinstance(items, (Mapping, str, bytes)) or not hasattr(items, "__iter__"):
            raise TypeError(f"events[{name!r}] must be a list of events")
        queued[name] = [to_wire(e) for e in items]
    return queued


class Backend(SdkCalls):
    """Serves SDK calls from memory: queued events by trigger name, a store dict, activity mocks,
    queued signals, webhook URLs (the service's requests: see `service.SdkCalls`).

    `match(filter, event) -> bool`, when given, decides whether a queued event reaches a
    subscription with that CEL filter; without it every queued event does (the kit does not
    evaluate CEL).
    """

    def __init__(
        self, events=None, store=None, mock_activities=None, match=None, signals=None, webhook_urls=None
    ):
        super().__init__(store, signals, webhook_urls)
        self.workflow_ident = get_ident()
        self.importing = False
        self.queued = _wire_queue(events)
        self.mocks = dict(mock_activities or {})
        self.match = match
        self.outcomes, self.subscriptions, self.next_events, self.activity_calls = [], [], [], []
        self.warnings = self.sdk_warnings
        self.fatal_error = None
        self._buffers = {}
        self._pool = None
        self.activities = self  # the SDK calls `session.activities.run(...)`
        self.retry = None  # the trigger's RetryPolicy (Session's `retry=`)

    # -- the seam ---------------------------------------------------------------------------

    def in_workflow(self):
        return get_ident() == self.workflow_ident and not self.importing

    def in_activity(self):
        return seam.in_activity_thread()

    def outcome(self, outcome):
        final = not outcome["more"]
        sent = final and not any(o.sent for o in self.outcomes)
        if final and not sent:
            self.warnings.append("the response was already sent: this outcome changes nothing")
        self.outcomes.append(
            Outcome(
                outcome["status_code"], Headers(outcome["headers"]), outcome["body"], outcome["more"], sent
            )
        )

    def subscribe(self, name, filter):
        if name not in self.queued:
            raise ValueError(
                f'source "{name}" not found (the testing kit knows the triggers named in events=)'
            )
        sub = Subscription(new_id("sub"), name, filter)
        self.subscriptions.append(sub)
        self._buffers[sub.id] = [e for e in self.queued[name] if self._passes(filter, e)]
        return sub.id

    def _passes(self, filter, wire):
        return self.match is None or not filter or bool(self.match(filter, event_from_wire(wire)))

    def next_event(self, ids, timeout):
        for id in ids:
            if id not in self._buffers:
                raise RuntimeError(f'unknown subscription "{id}"')
        found = None
        for id in ids:
            if self._buffers[id]:
                found = event_from_wire(self._buffers[id].pop(0))
                break
        if found is None and timeout is None:
            self.warnings.append(
                "next_event without a timeout found no queued event: the service would wait for ever; "
                "the testing kit returned None"
            )
        self.next_events.append(NextEvent(list(ids), timeout, found))
        return found

    def unsubscribe(self, id):
        if self._buffers.pop(id, None) is None:
            raise ValueError(f'unknown subscription "{id}"')
        for sub in self.subscriptions:
            if sub.id == id:
                sub.active = False

    # -- activities -------------------------------------------------------------------------

    def fatal(self, error):
        if self.fatal_error is None:
            self.fatal_error = error
        raise Fatal(error)

    def _executor(self):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                ACTIVITY_THREADS,
                thread_name_prefix="hl-test-activity",
                initializer=seam.mark_activity_thread,
            )
        return self._pool

    def run(self, fn, name, args, kwargs, is_async=False, decorated=False, retry=None):
        """Run one activity on an activity thread, its arguments and result passed by pickle.

        Under a retry policy (`retry`, else the session's `retry=`) a failed attempt that the
        policy tries again is tried again at once, without its wait: each attempt is an
        ActivityCall, and the last one's error carries `attempts`.
        """
        try:
            payload = pickle.dumps((args, kwargs), pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            self.fatal(_unpicklable(name, "arguments", e, decorated))
        policy = self.retry if retry is None else retry
        future = self._executor().submit(
            self._attempts, self.mocks.get(name, fn), name, payload, decorated, policy
        )
        if is_async and _running_loop() is not None:
            return asyncio.wrap_future(future)
        return future.result()

    def _attempts(self, fn, name, payload, decorated, policy):
        number = 1
        while True:
            call = ActivityCall(name, *pickle.loads(payload))
            self.activity_calls.append(call)
            try:
                return self._work(fn, name, payload, decorated, call)
            except Exception as e:
                if policy is None:
                    raise
                if policy.wait_after(number, e) is None:
                    e.attempts = number
                    raise
            number += 1

    def _work(self, fn, name, payload, decorated, call):
        args, kwargs = pickle.loads(payload)
        started = time.perf_counter()
        try:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))
        except BaseException as e:  # raised again on the workflow thread
            call.duration_ms = (time.perf_counter() - started) * 1000
            _, call.error = _pickle_error(e)
            raise call.error from None
        call.duration_ms = (time.perf_counter() - started) * 1000
        try:
            value = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        except Exception as e:
            call.error = _unpicklable(name, "result", e, decorated)
            self.fatal(call.error)
        call.result = value
        return value

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


async def _await(awaitable):
    return await awaitable


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
