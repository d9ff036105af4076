"""A durable session's replay as the runner sees it: step numbers, and how many are on record.

The service owns the journal and is the only judge of a replay (src/sessions/journal.ts): each
step the handler takes goes to it with its number, and it answers a recorded step from the
journal, fails the session when the handler takes another step there, and words that error. The
runner decides nothing about it: it numbers its steps and keeps the count of recorded steps
(the length of `start`'s journal), so that it asks the service for a recorded activity instead of
running it, and keeps the prints of replayed code quiet.
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
    """How many steps the service has on record, and how far the run has come."""

    def __init__(self, recorded=0):
        self.recorded = recorded
        self.seq = 0

    @property
    def replaying(self):
        return self.seq < self.recorded

    def on_record(self, seq):
        return seq < self.recorded

    def take(self):
        """The next step's number."""
        seq, self.seq = self.seq, self.seq + 1
        return seq
