"""A durable session's journal as the runner reads it: which step comes next, and what it recorded.

The service keeps the journal and sends it in `start`; a replay walks it step by step. A step the
handler takes must be the one recorded at that place, else the run is not deterministic.
"""

from .. import errors

# The errors a service reply (live or recorded) may carry, by name.
REPLY_ERRORS = {
    "ValueError": ValueError,
    "RuntimeError": RuntimeError,
    "TimeoutError": TimeoutError,
    "TypeError": TypeError,
    "AutoKittehError": errors.AutoKittehError,
}


def reply_error(name, message):
    """The exception a reply with error `name` raises in the handler."""
    return REPLY_ERRORS.get(name, errors.WorkflowError)(message)


class Replay:
    """The recorded steps of a durable session and how far the run has come through them."""

    def __init__(self, steps=()):
        self.steps = list(steps)
        self.seq = 0

    @property
    def replaying(self):
        return self.seq < len(self.steps)

    def recorded(self, seq):
        return seq < len(self.steps)

    def take(self, kind, name=None):
        """The next step's number; NonDeterminismError when the journal recorded another step there."""
        seq, self.seq = self.seq, self.seq + 1
        if seq < len(self.steps):
            step = self.steps[seq]
            if step["kind"] != kind or (kind == "activity" and step.get("function") != name):
                recorded = step.get("function") if step["kind"] == "activity" else step["kind"] + "()"
                now = name if kind == "activity" else kind + "()"
                raise errors.NonDeterminismError(
                    f"step {seq}: the journal recorded {step['kind']} {recorded} "
                    f"but the handler now calls {kind} {now}; "
                    "a durable handler must make the same calls in the same order"
                )
        return seq

    def value(self, seq):
        """A recorded request step's value, or the error it was answered with."""
        step = self.steps[seq]
        if "error" in step:
            raise reply_error(step["error"], step.get("message", ""))
        return step.get("value")

    def unfinished(self):
        """NonDeterminismError when the handler returned before the journal's last step, else None."""
        if not self.replaying:
            return None
        return errors.NonDeterminismError(
            f"step {self.seq}: the handler returned but the journal recorded "
            f"{len(self.steps)} steps; a durable handler must make the same calls in the same order"
        )
