/** Codes name the kind of failure; each maps to one HTTP status. */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  headers_too_large: 431,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorCode, string> = {
  bad_request: "Bad request",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  request_timeout: "Request timeout",
  conflict: "Conflict",
  payload_too_large: "Payload too large",
  unprocessable: "Unprocessable content",
  headers_too_large: "Request header fields too large",
  internal: "Internal server error",
  bad_gateway: "Bad gateway",
  unavailable: "Service unavailable",
  gateway_timeout: "Gateway timeout",
};

/** RFC 9457 problem details, as every error leaves the service. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extra: string]: unknown;
}

/**
 * The one error the service throws on purpose. Routes throw it; `onError` turns it into
 * problem+json. `extra` members are added to the problem body (never secrets or tracebacks).
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
  get status(): number {
    return ERROR_STATUS[this.code];
  }
  toProblem(): Problem {
    return {
      type: `https://hookline.dev/problems/${this.code.replaceAll("_", "-")}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.message,
      ...this.extra,
    };
  }
}

/** True for errors that mean "the input was wrong" rather than "we broke". */
export function isHooklineError(e: unknown): e is HooklineError {
  return e instanceof HooklineError;
}
