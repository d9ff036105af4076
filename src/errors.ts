/**
 * The kinds of failure the service knows, in its own terms. Each part throws a `HooklineError`
 * with one of them; what a kind becomes is decided where the error leaves the service, each in
 * one table: an HTTP status and problem type in the routes (src/routes/problem.ts), a Python
 * exception in the session core (src/sessions/python-errors.ts), `error: …` and exit 1 in the CLI.
 * The names are also the problem types clients read (`…/problems/not-found`), so they stay.
 */
export const ERROR_CODES = [
  /** The input is malformed or breaks a rule (a manifest, a request's field, a store key). */
  "bad_request",
  /** No valid credentials. */
  "unauthorized",
  /** The credentials are valid but do not allow it (or the request is not from where it may be). */
  "forbidden",
  /** What it names does not exist (a project, a session, a webhook address). */
  "not_found",
  /** The method does not apply to what it names. */
  "method_not_allowed",
  /** The sender was too slow to send what it started. */
  "request_timeout",
  /** It contradicts the state things are in (a repeated delivery, a full queue of signals). */
  "conflict",
  /** Bigger than a limit allows (a body, a form, a project's files, a stored value). */
  "too_large",
  /** Well-formed, but it cannot be carried out (a build that does not compile, a step not served). */
  "unprocessable",
  /** A value of the wrong type for the operation (adding to a value that is not a number). */
  "wrong_type",
  /** The request's headers are bigger than the limit. */
  "headers_too_large",
  /** The service broke; the detail stays in the log. */
  "internal",
  /** A session answered in a way that cannot be passed on (no outcome, a malformed one). */
  "bad_gateway",
  /** Not now: the service is full, stopping, or a part it needs is down. Retry later. */
  "unavailable",
  /** The wait for an answer ran out. */
  "timeout",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The one error the service throws on purpose, coded by kind. Where it leaves the service, one
 * table turns the code into an HTTP answer (problem+json) or a Python exception. `extra`
 * members go into the problem body (never secrets or tracebacks).
 * @example throw new HooklineError("not_found", `project "demo" not found`)
 */
export class HooklineError extends Error {
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown>;
  constructor(code: ErrorCode, detail: string, extra: Record<string, unknown> = {}) {
    super(detail);
    this.name = "HooklineError";
    this.code = code;
    this.extra = extra;
  }
}

/**
 * True for the service's own coded errors: what it refuses on purpose, rather than what broke.
 * @example isHooklineError(new HooklineError("conflict", "taken")) // true
 */
export function isHooklineError(e: unknown): e is HooklineError {
  return e instanceof HooklineError;
}
