"""The error family raised by workflow_sdk and the runner: one base, one subclass per cause."""


class WorkflowError(Exception):
    """Base of every error raised by workflow_sdk itself."""


class ActivityError(WorkflowError):
    """An activity raised an exception that could not be pickled; this carries its text."""


class UnpicklableError(ActivityError):
    """An activity's arguments or result cannot be pickled."""


class NonDeterminismError(WorkflowError):
    """A durable replay took a different step than the journal recorded."""


class WorkflowTimeoutError(WorkflowError):
    """Workflow code ran too long outside activities."""


class ProtocolError(WorkflowError):
    """The service sent a message the runner does not understand."""
