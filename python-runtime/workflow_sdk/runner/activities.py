"""Running calls as activities: `_hl_call` (the rewritten call), the thread pool, pickling, replay.

Durable sessions pickle each activity's arguments and result (the journal keeps them), and so do
non-durable sessions of `version: v2` manifests (the spec's rule, `session.pickle_values`): an
unpicklable one fails the session. Other non-durable sessions (`version: v1`, AutoKitteh's
rule) pass them as they are.
"""

import asyncio
import contextlib
import pickle
import threading
import types
from _thread import allocate_lock, get_ident
from concurrent.futures import ThreadPoolExecutor
from hashlib import blake2b as _blake2b
from time import sleep as _time_sleep

from .. import seam
from ..errors import ActivityError
from ..inline import no_activity
from . import apart, retrying
from .decide import BUILTIN_TYPES, activity_name, cache_key
from .rebuild import pickle_error as _pickle_error
from .rebuild import unpicklable as _unpicklable
from .retrying import exc_text as _exc_text

MAX_WORKERS = 8
_BuiltinFunctionType = types.BuiltinFunctionType
_FunctionType = types.FunctionType


class Activities:
    """Per-session activity machinery; also the import hook's `hook` (call, modules, importing)."""

    def __init__(self, session, in_project_file=lambda filename: False):
        self._session = session
        self.in_project_file = in_project_file
        self.modules = set()  # project modules loaded through the hook
        self._importing = 0
        self.inline = 0  # > 0 inside `inhibit_activities()`: calls run directly
        self._cache = {}
        self._executor = None
        self._lane = None
        self.call = self._make_call()

    # -- the decision -------------------------------------------------------------------------

    def _in_project(self, module, filename):
        if module in self.modules:
            return True
        return filename is not None and self.in_project_file(filename)

    def _name(self, f):
        return None if no_activity(f) else activity_name(f, self._in_project)

    def decide(self, f):
        try:
            key = cache_key(f)
            return self._cache[key]
        except KeyError:
            name = self._cache[key] = self._name(f)
            return name
        except TypeError:  # unhashable key
            return self._name(f)

    def forget(self):
        """Drop cached decisions (after `register_no_activity`)."""
        self._cache.clear()

    @contextlib.contextmanager
    def importing(self):
        counted = get_ident() == self._session.workflow_ident
        if counted:
            self._importing += 1
        try:
            yield
        finally:
            if counted:
                self._importing -= 1

    def _make_call(self):
        session, cache, decide_slow = self._session, self._cache, self.decide
        run = self.run
        builtin_types = BUILTIN_TYPES

        def _hl_call(f, /, *args, **kwargs):
            if get_ident() != session.workflow_ident or self._importing or self.inline:
                return f(*args, **kwargs)
            if type(f) is _BuiltinFunctionType and type(f.__self__) in builtin_types:
                return f(*args, **kwargs)
            try:
                name = cache[f if type(f) is _FunctionType else cache_key(f)]
            except (KeyError, TypeError):
                name = decide_slow(f)
            if name is None:
                return f(*args, **kwargs)
            return run(f, name, args, kwargs)

        return _hl_call

    # -- running ------------------------------------------------------------------------------

    def _pool(self):
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                MAX_WORKERS, thread_name_prefix="hl-activity", initializer=seam.mark_activity_thread
            )
        return self._executor

    def run(self, fn, name, args, kwargs, is_async=False, decorated=False, retry=None):
        """Run one activity from the workflow thread (replaying it in a durable session).

        `retry`: the activity's own RetryPolicy; None: the session's (its trigger's `retry:`).
        """
        session = self._session
        if fn is _time_sleep and session.durable and not decorated:
            return session.durable_sleep(*args, **kwargs)
        seq = session.next_step()
        resumed = None
        if seq is not None and session.replaying_step(seq):
            # The service answers from its journal (or fails the session when the step differs).
            step = session.replay_activity(seq, name, _digest_of(args, kwargs) if session.checking else None)
            if "retry_at" not in step:
                return self._replay(seq, step, is_async)
            resumed = step  # attempts that failed before the process went: the rest run live
        payload = self._payload(name, args, kwargs, decorated)
        job = (
            fn,
            name,
            payload,
            is_async,
            decorated,
            seq,
            session.retry if retry is None else retry,
            resumed,
        )
        session.clock.pause()
        if is_async and _running_loop() is not None:
            future = self._pool().submit(self._work, *job)
            future.add_done_callback(lambda _: session.clock.resume())
            return asyncio.wrap_future(future)
        # The workflow thread waits for this one: hand it to the lane, the pool's cheap path.
        try:
            return self._lane_for().call(self._work, *job)
        finally:
            session.clock.resume()

    def _payload(self, name, args, kwargs, decorated):
        if not self._session.pickle_values:
            # Non-durable v1: nothing is journaled, so values pass as they are (AutoKitteh runs a
            # non-durable session as plain Python); a lock or a client may cross the boundary.
            return (args, kwargs)
        try:
            return pickle.dumps((args, kwargs), pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            self._session.fatal(_unpicklable(name, "arguments", e, decorated))

    def _lane_for(self):
        if self._lane is None:
            self._lane = Lane()
        return self._lane

    def _work(self, fn, name, payload, is_async, decorated, seq, policy, resumed):
        session = self._session
        as_is = not session.pickle_values
        started = session.report_started(name)  # its row in flight on the session's page

        if policy is None:  # the hot path: one attempt, as before retries existed
            args, kwargs = payload if as_is else pickle.loads(payload)
            (value, error, duration_ms), number = retrying.attempt(fn, args, kwargs, is_async, asyncio.run), 1
        else:

            def call():  # each attempt gets its own copy of the arguments
                args, kwargs = payload if as_is else pickle.loads(payload)
                return retrying.attempt(fn, args, kwargs, is_async, asyncio.run)

            value, error, duration_ms, number = retrying.attempts(session, policy, call, seq, name, resumed)
        tried = None if policy is None or (error is None and number == 1) else number
        fields = None if tried is None else retrying.report_fields(policy, number, done=True)
        if as_is:
            session.report_activity(
                name, duration_ms, None if error is None else _exc_text(error), retry=fields, started=started
            )
            if error is not None:
                raise error if tried is None else retrying.mark(error, tried)
            return value
        if error is None:
            try:
                data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
                value = pickle.loads(data)
            except Exception as e:
                session.report_activity(name, duration_ms, _exc_text(e), started=started)
                session.fatal(_unpicklable(name, "result", e, decorated))
        else:
            data, error = _pickle_error(error)
        session.report_activity(
            name, duration_ms, None if error is None else _exc_text(error), retry=fields, started=started
        )
        if seq is not None:
            key = "result" if error is None else "error"
            step = {
                "seq": seq,
                "kind": "activity",
                "function": name,
                **apart.step_fields(session, seq, name, key, data),
            }
            del data  # a value sent apart is not kept twice while its step waits for the ack
            step["args"] = _digest(payload)
            if tried is not None:
                step["attempts"] = tried
            session.record_step(step)
        if error is not None:
            raise error if tried is None else retrying.mark(error, tried)
        return value

    def _replay(self, seq, step, is_async):
        try:
            data, field = apart.recorded(self._session.channel, seq, step)
            outcome, value = field == "result", pickle.loads(data)
            if not outcome and "attempts" in step:
                retrying.mark(value, step["attempts"])
        except Exception as e:
            self._session.fatal(
                ActivityError(f"journal step {seq} ({step['function']}) cannot be unpickled: {e}")
            )
        loop = _running_loop() if is_async else None
        if loop is not None:
            future = loop.create_future()
            future.set_result(value) if outcome else future.set_exception(value)
            return future
        if not outcome:
            raise value
        return value


def _digest(payload):
    """A short digest of an activity's pickled arguments: a replay check compares it (journal.ts)."""
    return _blake2b(payload, digest_size=8).hexdigest()


def _digest_of(args, kwargs):
    try:
        return _digest(pickle.dumps((args, kwargs), pickle.HIGHEST_PROTOCOL))
    except Exception:  # arguments that cannot be pickled have no digest: nothing to compare
        return None


class Lane:
    """One activity thread for the calls the workflow thread waits on, one at a time.

    The workflow thread blocks on each such call, so it never needs more than one; handing work
    over with two locks costs a fraction of a ThreadPoolExecutor's submit and Future. Activities
    started from a running event loop (which may overlap) still go to the pool.
    """

    def __init__(self):
        self._go = allocate_lock()
        self._go.acquire()
        self._done = allocate_lock()
        self._done.acquire()
        self._job = None
        self._result = None
        threading.Thread(target=self._serve, name="hl-activity-lane", daemon=True).start()

    def _serve(self):
        seam.mark_activity_thread()
        while True:
            self._go.acquire()
            fn, args = self._job
            try:
                self._result = (True, fn(*args))
            except BaseException as e:  # re-raised on the workflow thread
                self._result = (False, e)
            self._done.release()

    def call(self, fn, *args):
        self._job = (fn, args)
        self._go.release()
        self._done.acquire()
        ok, value = self._result
        self._job = self._result = None
        if ok:
            return value
        raise value


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
