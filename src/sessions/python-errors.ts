import { type ErrorCode, isHooklineError } from "../errors.ts";

/** The exceptions a workflow may see for a step the service refused. */
export type PythonError =
  | "ValueError"
  | "TypeError"
  | "TimeoutError"
  | "AutoKittehError"
  | "RuntimeError";

/**
 * Each kind of failure as the Python exception a workflow sees: the caller's mistakes are a
 * `ValueError` (AutoKitteh's programs catch it so), a value of the wrong type a `TypeError`, a
 * store over its limits AutoKitteh's own `AutoKittehError`, a wait run out a `TimeoutError`;
 * what is not the caller's doing is a `RuntimeError`. The one place a code meets Python.
 */
const PYTHON: Record<ErrorCode, PythonError> = {
  bad_request: "ValueError",
  unprocessable: "ValueError",
  not_found: "ValueError",
  conflict: "ValueError",
  wrong_type: "TypeError",
  too_large: "AutoKittehError",
  timeout: "TimeoutError",
  unauthorized: "RuntimeError",
  forbidden: "RuntimeError",
  method_not_allowed: "RuntimeError",
  request_timeout: "RuntimeError",
  headers_too_large: "RuntimeError",
  internal: "RuntimeError",
  bad_gateway: "RuntimeError",
  unavailable: "RuntimeError",
};

/**
 * The refusal a workflow sees for a failed step: the Python exception of the error's code (any
 * other error: `RuntimeError`), with the error's message. Journaled as it is.
 * @example refusal(new HooklineError("bad_request", "no")) // { ok: false, error: "ValueError", message: "no" }
 */
export function refusal(e: unknown): { ok: false; error: PythonError; message: string } {
  const error = isHooklineError(e) ? PYTHON[e.code] : "RuntimeError";
  return { ok: false, error, message: e instanceof Error ? e.message : String(e) };
}
