"""`Result`: everything one handler run under test did, and `HandlerError`, how it failed.

>>> r = Result("ses_x")
>>> r.ok, r.state, r.response, r.prints
(True, 'completed', None, [])
"""

from dataclasses import dataclass, field

__all__ = ["HandlerError", "Print", "Result"]


@dataclass
class HandlerError:
    """How the run failed: `type` (`"KeyError"`), `message`, `traceback` (the user's frames),
    and the `exception` object itself. `str()` is the session log's text, `KeyError: 'sku'`.
    """

    type: str
    message: str
    traceback: str
    exception: BaseException

    def __str__(self):
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass
class Print:
    """One print: a line of text and its stream (`"stdout"` or `"stderr"`)."""

    text: str
    stream: str


@dataclass
class Result:
    """What a handler did. `response` is the first final outcome (None if there was none).

    - `outcomes`: every `http_outcome` (`Outcome`: status, headers, body, more, sent);
    - `prints` (all lines, in order), `stdout`, `stderr`, `output` (`Print` records);
    - `subscriptions`, `next_events`, `activities` (`ActivityCall`), `store`, `warnings`;
    - `error` (`HandlerError` or None), `ok`, `state` (`"completed"` or `"error"`), `value`
      (what the handler returned);
    - `started` (`StartCall`: each `start()`, not run), `signals_sent` (`SentSignal`),
      `next_signals` (`(names, timeout, name of the signal returned or None)`), `outcome_values`
      (each `outcome(value)`), `outcome_value` (the last one, or None).
    """

    session_id: str
    event: object = None
    value: object = None
    error: "HandlerError | None" = None
    outcomes: list = field(default_factory=list)
    output: list = field(default_factory=list)
    subscriptions: list = field(default_factory=list)
    next_events: list = field(default_factory=list)
    activities: list = field(default_factory=list)
    store: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    started: list = field(default_factory=list)
    signals_sent: list = field(default_factory=list)
    next_signals: list = field(default_factory=list)
    outcome_values: list = field(default_factory=list)

    @property
    def outcome_value(self):
        return self.outcome_values[-1] if self.outcome_values else None

    @property
    def ok(self):
        return self.error is None

    @property
    def state(self):
        return "completed" if self.error is None else "error"

    @property
    def response(self):
        for outcome in self.outcomes:
            if not outcome.more:
                return outcome
        return None

    @property
    def prints(self):
        return [p.text for p in self.output]

    @property
    def stdout(self):
        return [p.text for p in self.output if p.stream == "stdout"]

    @property
    def stderr(self):
        return [p.text for p in self.output if p.stream == "stderr"]

    def raise_error(self):
        """Raise the handler's exception again, if it raised one (for a test's own reporting)."""
        if self.error is not None:
            raise self.error.exception
