"""The error family raised by workflow_sdk and the runner: one base, one subclass per cause.

`AutoKittehError` is the root, under its AutoKitteh name, so `except AutoKittehError` in
AutoKitteh programs catches what this SDK raises; the AutoKitteh connection errors are here too.
"""


class AutoKittehError(Exception):
    """Base of every error raised by the SDK (AutoKitteh's name for it)."""


class WorkflowError(AutoKittehError):
    """Base of every error raised by workflow_sdk itself."""


class ActivityError(WorkflowError):
    """An activity raised an exception that could not be pickled; this carries its text."""


class UnpicklableError(ActivityError):
    """An activity's arguments or result cannot be pickled (durable sessions)."""


class NonDeterminismError(WorkflowError):
    """A durable replay took a different step than the journal recorded.

    The service detects and words it (src/sessions/journal.ts) and ends the session with it; the
    name stays here for code that refers to it.
    """


class WorkflowTimeoutError(WorkflowError):
    """Workflow code ran too long outside activities."""


class ActivityCallError(WorkflowError, RuntimeError):
    """An SDK call that goes through the service was made inside an activity.

    Its text starts with the call, as AutoKitteh's does (`next_event inside activity: …`); it is
    a RuntimeError too, as this SDK raised before.
    """

    def __init__(self, op):
        self.op = op
        super().__init__(
            f"{op} inside activity: workflow_sdk.{op}() cannot be called inside an activity; calls "
            "that go through the service (subscribe, next_event, unsubscribe, the store, start, "
            "signal, next_signal, outcome, get_webhook_url) must run in workflow code, outside activities"
        )

    def __reduce__(self):  # through pickle (a durable activity's journal) with its call's name
        return (type(self), (self.op,))


class ProtocolError(WorkflowError):
    """The service sent a message the runner does not understand."""


class ConnectionInitError(AutoKittehError):
    """A connection's client cannot be made: a variable or a package it needs is missing.

    AutoKitteh's text comes first (`AutoKitteh connection 'x' not initialized`); Hookline adds
    what is missing, by name, so the fix is in the message.
    """

    def __init__(self, connection, missing=None):
        text = f"AutoKitteh connection {connection!r} not initialized"
        super().__init__(f"{text}: {missing}" if missing else text)
        self.connection = connection
        self.missing = missing

    def __reduce__(self):  # through pickle (raised inside an activity) as it was made
        return (type(self), (self.connection, self.missing))


class ConnectionNotSupportedError(ConnectionInitError):
    """A client helper of an integration this service has no client for yet."""

    def __init__(self, helper, connection=None):
        named = f"({connection!r})" if connection is not None else "()"
        AutoKittehError.__init__(
            self,
            f"{helper}{named}: this integration's client helper is not supported by this service "
            "yet; call the service's API with its own client library, with a token kept in a "
            "secret project var (cli var set --secret); see docs/connection-clients.md",
        )
        self.connection = connection
        self.missing = None
        self.helper = helper

    def __reduce__(self):
        return (type(self), (self.helper, self.connection))


class EnvVarError(AutoKittehError):
    """A required environment variable is missing or invalid (AutoKitteh)."""

    def __init__(self, env_var, desc):
        super().__init__(f"Environment variable {env_var!r} is {desc}")


class OAuthRefreshError(AutoKittehError):
    """OAuth token refresh failed (AutoKitteh)."""

    def __init__(self, connection, error):
        super().__init__(f"OAuth refresh failed for {connection!r} connection: {error}")


class AtlassianOAuthError(AutoKittehError):
    """API calls not supported by OAuth-based Atlassian connections (AutoKitteh)."""

    def __init__(self, connection):
        super().__init__(f"API calls not supported by {connection!r}, use a token-based connection instead")
