"""An activity's attempts under a retry policy (workflow_sdk.RetryPolicy), on its activity thread.

After a failed attempt that the policy tries again, the attempt goes to the session log with its
error and the wait before the next one, and the wait happens: in a non-durable session here, in
the process; in a durable one it is a request to the service (`retry`), which records the
attempt in the journal (the activity's step, marked pending with its deadline) and answers when
the deadline passes. The service may release this process meanwhile and resume the session by
replay, which finds the pending step and comes back here for the attempts left
(`Activities.run`). Without a policy none of this runs: an activity is one attempt, as before.
"""

import base64
import time
from time import sleep as _time_sleep

from .rebuild import pickle_error
from .replay import reply_error


def attempt(fn, args, kwargs, is_async, run_async):
    """One call of the activity: (value, error, duration in ms); the error is what it raised."""
    started = time.perf_counter()
    try:
        value = fn(*args, **kwargs)
        if is_async:
            value = run_async(value)
        error = None
    except BaseException as e:  # re-raised in the workflow thread
        value, error = None, e
    return value, error, (time.perf_counter() - started) * 1000


def report_fields(policy, number, wait=None, done=False):
    """What the session log's activity line carries of attempt `number` (`activity` message's `retry`)."""
    fields = {"attempt": number, "of": policy.max_attempts}
    if not done:
        fields["next_in"] = wait
    return fields


def attempts(session, policy, call, seq, name, resumed=None):
    """Attempts `call()` until one succeeds, the error is not retried, or the attempts are spent.

    `resumed`: the journal's pending step of a durable activity resumed by replay; its wait is
    done first (the service kept the deadline), and its attempts count. Returns
    (value, error, duration in ms, the number of the last attempt).
    """
    number = 1
    if resumed is not None:
        number = resumed["attempts"]
        wait(session, seq, name, number, 0, resumed["error"])
        number += 1
    while True:
        value, error, duration_ms = call()
        delay = None if error is None else policy.wait_after(number, error)
        if delay is None:
            return value, error, duration_ms, number
        session.report_activity(
            name, duration_ms, exc_text(error), retry=report_fields(policy, number, delay)
        )
        wait(session, seq, name, number, delay, _pickled(error) if seq is not None else None)
        number += 1


def wait(session, seq, name, number, seconds, error):
    """The wait after failed attempt `number`: a durable one's is the service's (on record)."""
    if seq is None:
        _time_sleep(seconds)
        return
    msg = {
        "type": "retry",
        "seq": seq,
        "function": name,
        "attempt": number,
        "seconds": seconds,
        "error": error,
    }
    reply = session.channel.request(msg)  # from the activity thread: the workflow clock is paused
    if not reply["ok"]:
        raise reply_error(reply["error"], reply["message"])


def _pickled(error):
    data, _ = pickle_error(error)
    return base64.b64encode(data).decode()


def exc_text(err):
    """An exception as the session log shows it: `Type: message` (or its rebuilt call, rebuild.py)."""
    shown = getattr(err, "__hl_shown__", None)
    return shown if shown is not None else f"{type(err).__name__}: {err}"


def mark(error, number):
    """The exception that reaches the workflow after the last attempt carries how many there were."""
    try:
        error.attempts = number
    except (AttributeError, TypeError):  # an exception type that takes no attributes
        pass
    return error
