"""Running a handler in this process, as a session would: `run(...)` and `Session`.

>>> from workflow_sdk import http_outcome
>>> from workflow_sdk.testing import event
>>> def on_post(e):
...     print("got", e.data.body.json["n"])
...     http_outcome(201, json={"n": e.data.body.json["n"]})
>>> r = run(on_post, event(json={"n": 3}))
>>> r.response.status, r.response.json, r.prints
(201, {'n': 3}, ['got 3'])
"""

import asyncio
import importlib
import inspect
import os
import sys
import traceback
from _thread import get_ident

from .. import seam
from ..errors import WorkflowError
from ..event import event_from_wire
from ..runner.capture import LineWriter
from ..runner.loader import module_name
from .backend import Backend, Fatal
from .events import event as make_event
from .events import new_id, to_wire
from .result import HandlerError, Print, Result

__all__ = ["Session", "run"]


def _caller_dir(depth):
    filename = sys._getframe(depth + 1).f_globals.get("__file__")
    return os.path.dirname(os.path.abspath(filename)) if filename else os.getcwd()


def _check_vars(vars):
    env = dict(vars or {})
    for name, value in env.items():
        if not isinstance(name, str) or not name or not isinstance(value, str):
            raise TypeError(
                f"vars must map names to str values (as the service sets them), got {name!r}: {value!r}"
            )
    return env


def _under(name, module, root):
    """A module of the project (the SDK and the standard library never count)."""
    top = name.partition(".")[0]
    if top in ("workflow_sdk", "autokitteh") or top in sys.stdlib_module_names:
        return False
    filename = getattr(module, "__file__", None)
    return bool(filename) and os.path.realpath(filename).startswith(root + os.sep)


SDK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # as the runner's
_IMPORTLIB = os.path.dirname(importlib.__file__) + os.sep


def _traceback(err):
    """The traceback as the session log shows it: the SDK's, the kit's and importlib's frames left out."""
    frames = [
        f
        for f in traceback.extract_tb(err.__traceback__)
        if not f.filename.startswith((SDK_DIR, _IMPORTLIB, "<frozen importlib"))
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(err), err))


def _handler_error(err):
    if isinstance(err, SystemExit):
        return HandlerError("SystemExit", str(err.code), _traceback(err), err)
    return HandlerError(type(err).__name__, str(err), _traceback(err), err)


class Session:
    """One session under test: vars in `os.environ`, prints captured, the SDK's calls recorded.

    Use it as a context manager, and `run` one handler in it (or call SDK functions directly):

    >>> import workflow_sdk
    >>> with Session(vars={"GREETING": "hi"}) as s:
    ...     workflow_sdk.http_outcome(204)
    ...     print(os.environ["GREETING"])
    >>> s.result.response.status, s.result.prints
    (204, ['hi'])

    Arguments (all keyword): `vars` (str → str, set for the session, restored after); `events`
    (trigger name → list of events that `next_event` returns, in order); `store` (a dict, copied:
    see `workflow_sdk.seam.store()`); `session_id`; `mock_activities` (activity name such
    as `"handlers.save"` → a function run instead); `match(filter, event) -> bool`, to apply
    subscription filters (the kit does not evaluate CEL: without it every queued event matches);
    `project_dir`, where a `"file.py:function"` handler is found (default: the caller's folder);
    `signals` (a list of `(name, payload)` pairs or `Signal`s that `next_signal` returns, in
    order); `webhook_urls` (trigger name → the URL `get_webhook_url` returns); `retry`, a
    `RetryPolicy` as the trigger's `retry:` (attempts are tried again at once, without waits).
    The handler's event gets the session's id: `session_id`, else the event's own, else a new one.
    """

    def __init__(
        self,
        *,
        vars=None,
        events=None,
        store=None,
        session_id=None,
        mock_activities=None,
        match=None,
        project_dir=None,
        signals=None,
        webhook_urls=None,
        retry=None,
    ):
        self._env = _check_vars(vars)
        self._project_dir = os.path.realpath(project_dir or _caller_dir(1))
        self._backend = Backend(events, dict(store or {}), mock_activities, match, signals, webhook_urls)
        b = self._backend
        b.retry = retry
        self.result = Result(
            session_id or new_id("ses"),
            outcomes=b.outcomes,
            subscriptions=b.subscriptions,
            next_events=b.next_events,
            activities=b.activity_calls,
            store=b.store,
            warnings=b.warnings,
            started=b.started,
            signals_sent=b.signals_sent,
            next_signals=b.next_signals,
            outcome_values=b.outcome_values,
        )
        b.session_id = self.result.session_id
        self._session_id_given = session_id is not None
        self._saved_env = None
        self._saved_streams = None
        self._ran = False

    # -- entering and leaving ---------------------------------------------------------------

    def __enter__(self):
        if seam.current is not None:
            raise RuntimeError("a session is already running in this process: one Session at a time")
        self._saved_env = {name: os.environ.get(name) for name in self._env}
        os.environ.update(self._env)
        sink = self._sink
        self._saved_streams = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = LineWriter("stdout", 1, sink), LineWriter("stderr", 2, sink)
        self._backend.workflow_ident = get_ident()
        seam.current = self._backend
        return self

    def __exit__(self, *exc):
        try:
            self._backend.close()
            for writer in (sys.stdout, sys.stderr):
                if isinstance(writer, LineWriter):
                    writer.flush_all()
        finally:
            seam.current = None
            sys.stdout, sys.stderr = self._saved_streams
            for name, value in self._saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return False

    def _sink(self, text, stream):
        self.result.output.append(Print(text, stream))

    # -- running ----------------------------------------------------------------------------

    def run(self, handler, event=None, *, raise_errors=False):
        """Call `handler` (a function, or `"file.py:function"`) with `event`; returns `result`.

        An exception becomes `result.error` unless `raise_errors` is true. A string handler's
        module is imported afresh inside the session (so module-level code sees `vars`), with
        the project folder as working directory and first on `sys.path`, as in the service.
        """
        if seam.current is not self._backend:
            raise RuntimeError("Session.run needs the session entered: use `with Session(...) as s:`")
        if self._ran:
            raise RuntimeError("a Session runs one handler: start another Session for the next run")
        self._ran = True
        if event is None:
            event = make_event()
        wire = to_wire(event)
        if wire.get("session_id") and not self._session_id_given:
            self.result.session_id = wire["session_id"]  # the event's own, from event(session_id=)
            self._backend.session_id = wire["session_id"]
        wire["session_id"] = self.result.session_id
        self.result.event = event_from_wire(wire)
        if isinstance(handler, str):
            module, func = self._entry(handler)
        elif not callable(handler):
            raise TypeError(f"handler must be a function or 'file.py:function', got {type(handler).__name__}")
        error = None
        try:
            if isinstance(handler, str):
                self.result.value = self._run_entry(handler, module, func)
            else:
                self.result.value = self._call(handler)
        except Fatal as f:
            error = f.error
        except SystemExit as e:
            if e.code not in (None, 0):
                error = e
        except Exception as e:
            error = e
        if self._backend.fatal_error is not None:  # ends the session even if the handler caught it
            error = self._backend.fatal_error
        if error is not None:
            self.result.error = _handler_error(error)
            if raise_errors:
                raise error
        return self.result

    def _call(self, handler):
        value = handler(self.result.event)
        if inspect.isawaitable(value):
            value = asyncio.run(_await(value))
        return value

    def _entry(self, entry):
        """`"pkg/mod.py:fn"` → `("pkg.mod", "fn")`, checked as the runner checks it."""
        file, _, func = entry.rpartition(":")
        parts = file.replace("\\", "/").split("/")
        if not file.endswith(".py") or os.path.isabs(file) or ".." in parts or not func:
            raise ValueError(f'entry "{entry}": expected <relative/path.py>:<function>')
        if not os.path.isfile(os.path.join(self._project_dir, *parts)):
            raise ValueError(f'entry "{entry}": no file {file} in {self._project_dir} (pass project_dir=)')
        return module_name(file), func

    def _run_entry(self, entry, name, func):
        root = self._project_dir
        names = {".".join(name.split(".")[: i + 1]) for i in range(name.count(".") + 1)}
        stash = {k: m for k, m in sys.modules.items() if k in names or _under(k, m, root)}
        for k in stash:
            del sys.modules[k]
        cwd, path = os.getcwd(), list(sys.path)
        try:
            os.chdir(root)
            sys.path.insert(0, root)
            importlib.invalidate_caches()
            self._backend.importing = True
            try:
                module = importlib.import_module(name)
            finally:
                self._backend.importing = False
            handler = getattr(module, func, None)
            if not callable(handler):
                raise WorkflowError(f'entry "{entry}": {entry.rpartition(":")[0]} has no function {func!r}')
            return self._call(handler)
        finally:
            os.chdir(cwd)
            sys.path[:] = path
            for k, m in list(sys.modules.items()):
                if k in names or _under(k, m, root):
                    del sys.modules[k]
            sys.modules.update(stash)


def run(handler, event=None, *, raise_errors=False, **options):
    """Run one handler as a session would and return its `Result` (see `Session` for options).

    >>> r = run(lambda e: 1 / 0)
    >>> r.state, str(r.error)
    ('error', 'ZeroDivisionError: division by zero')
    """
    if options.get("project_dir") is None:
        options["project_dir"] = _caller_dir(1)
    with Session(**options) as session:
        return session.run(handler, event, raise_errors=raise_errors)


async def _await(awaitable):
    return await awaitable
