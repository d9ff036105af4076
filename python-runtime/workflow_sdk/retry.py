"""Retry policies: how an activity that raises is tried again (docs/sessions.md, "Retries").

`RetryPolicy` goes on `@workflow_sdk.activity(retry=…)`, and a trigger's `retry:` in the manifest
is the same policy for every other activity of its sessions. The runner asks a policy two things
after a failed attempt: may this error be tried again, and how long to wait first.

>>> policy = RetryPolicy(max_attempts=5, initial_interval=1, backoff=2.0, max_interval=60)
>>> [policy.delay(n) for n in (1, 2, 3)]
[1.0, 2.0, 4.0]
"""

import math

from .errors import AutoKittehError

# Bounds: a policy is kept per session and its waits by the service (a durable timer's bound).
MAX_ATTEMPTS = 1000
MAX_INTERVAL = 366 * 24 * 3600
MAX_BACKOFF = 100.0


def _number(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"RetryPolicy: {name} must be a number of seconds, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"RetryPolicy: {name} must be from {low:g} to {high:g}, got {value!r}")
    return float(value)


def _error_names(items):
    if isinstance(items, (str, type)):
        items = (items,)
    out = []
    for item in items:
        if isinstance(item, type) and issubclass(item, BaseException):
            out.append(item)
        elif isinstance(item, str) and item:
            out.append(item)
        else:
            raise TypeError(
                f"RetryPolicy: non_retryable takes exception classes or their names, got {item!r}"
            )
    return tuple(out)


def _names_of(cls):
    """The names a class answers to: `PermissionError`, `builtins.PermissionError`."""
    return {cls.__name__, cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}"}


class RetryPolicy:
    """How an activity that raises is tried again.

    Up to `max_attempts` attempts in all (1: never again); before attempt n+1 the wait is
    `initial_interval * backoff ** (n - 1)` seconds, at most `max_interval`. An error that is an
    instance of one of `non_retryable` (classes, or names such as `"PermissionError"` or
    `"requests.exceptions.HTTPError"`, matched along its class's bases) is raised at once; so are
    the SDK's own errors (`AutoKittehError` and below) and what is not an `Exception`.

    >>> RetryPolicy(max_attempts=3, non_retryable=(PermissionError,)).retries(PermissionError())
    False
    """

    __slots__ = ("max_attempts", "initial_interval", "backoff", "max_interval", "non_retryable")

    def __init__(
        self, max_attempts=3, initial_interval=1.0, backoff=2.0, max_interval=60.0, non_retryable=()
    ):
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
            raise TypeError(f"RetryPolicy: max_attempts must be a whole number, got {max_attempts!r}")
        if not 1 <= max_attempts <= MAX_ATTEMPTS:
            raise ValueError(
                f"RetryPolicy: max_attempts must be from 1 to {MAX_ATTEMPTS}, got {max_attempts}"
            )
        self.max_attempts = max_attempts
        self.initial_interval = _number("initial_interval", initial_interval, 0, MAX_INTERVAL)
        self.backoff = _number("backoff", backoff, 1, MAX_BACKOFF)
        self.max_interval = _number("max_interval", max_interval, 0, MAX_INTERVAL)
        if self.max_interval < self.initial_interval:
            raise ValueError(
                f"RetryPolicy: max_interval ({max_interval!r}) must not be below initial_interval "
                f"({initial_interval!r})"
            )
        self.non_retryable = _error_names(non_retryable)

    def delay(self, attempt):
        """Seconds to wait after failed attempt `attempt` (1 is the first) before the next."""
        try:
            wait = self.initial_interval * self.backoff ** (attempt - 1)
        except OverflowError:
            return self.max_interval
        return min(wait, self.max_interval)

    def retries(self, error):
        """Whether `error` may be tried again (its kind only; the attempts left are `wait_after`'s)."""
        if not isinstance(error, Exception) or isinstance(error, AutoKittehError):
            return False
        names = set().union(*(_names_of(c) for c in type(error).__mro__))
        for item in self.non_retryable:
            if isinstance(item, str) and item in names:
                return False
            if isinstance(item, type) and isinstance(error, item):
                return False
        return True

    def wait_after(self, attempt, error):
        """Seconds before the next attempt after attempt `attempt` failed with `error`; None: no more."""
        if attempt >= self.max_attempts or not self.retries(error):
            return None
        return self.delay(attempt)

    def to_wire(self):
        """The policy as the service's `start` message carries a trigger's (names, not classes)."""
        names = [n if isinstance(n, str) else f"{n.__module__}.{n.__qualname__}" for n in self.non_retryable]
        return {
            "max_attempts": self.max_attempts,
            "initial_interval": self.initial_interval,
            "backoff": self.backoff,
            "max_interval": self.max_interval,
            "non_retryable": names,
        }

    @classmethod
    def from_wire(cls, wire):
        """The policy of a `start` message's `retry`, or None when it has none."""
        if not wire:
            return None
        return cls(**{key: wire[key] for key in cls.__slots__ if key in wire})

    def __eq__(self, other):
        return isinstance(other, RetryPolicy) and self.to_wire() == other.to_wire()

    __hash__ = None

    def __repr__(self):
        wire = self.to_wire()
        return "RetryPolicy(" + ", ".join(f"{k}={wire[k]!r}" for k in self.__slots__) + ")"
