import type { Env, Hono } from "hono";
import { type ErrorCode, HooklineError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { StorageUnavailable } from "../storage/unavailable.ts";
import type { ProblemView } from "../wire/views.ts";

/**
 * Each kind of failure as HTTP: its status, its title, and the problem type clients match on
 * (the code's own name, with dashes, except where a code was renamed and its clients were not).
 * The one place a code meets HTTP.
 */
const HTTP: Record<ErrorCode, { status: number; title: string; type?: string }> = {
  bad_request: { status: 400, title: "Bad request" },
  unauthorized: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  request_timeout: { status: 408, title: "Request timeout" },
  conflict: { status: 409, title: "Conflict" },
  too_large: { status: 413, title: "Payload too large", type: "payload-too-large" },
  unprocessable: { status: 422, title: "Unprocessable content" },
  wrong_type: { status: 422, title: "Unprocessable content", type: "unprocessable" },
  headers_too_large: { status: 431, title: "Request header fields too large" },
  internal: { status: 500, title: "Internal server error" },
  bad_gateway: { status: 502, title: "Bad gateway" },
  unavailable: { status: 503, title: "Service unavailable" },
  timeout: { status: 504, title: "Gateway timeout", type: "gateway-timeout" },
};

/**
 * The HTTP status a code is answered with.
 * @example httpStatus("not_found") // 404
 */
export function httpStatus(code: ErrorCode): number {
  return HTTP[code].status;
}

/**
 * The error as problem details: its code's status, title and type, its message as the detail,
 * and its `extra` members.
 * @example toProblem(new HooklineError("not_found", "no such route")).status // 404
 */
export function toProblem(err: HooklineError): ProblemView {
  const { status, title, type } = HTTP[err.code];
  return {
    type: `https://hookline.dev/problems/${type ?? err.code.replaceAll("_", "-")}`,
    title,
    status,
    detail: err.message,
    ...err.extra,
  };
}

/**
 * Errors as problem+json, for the whole app: a `HooklineError` as its code says, anything else
 * logged and answered with a generic 500 (no internals in a response); storage down also says
 * when to retry. An unknown route is a 404 like any other.
 * @example answerErrors(app, log);
 */
export function answerErrors<E extends Env>(app: Hono<E>, log: Logger): void {
  app.onError((err, c) => {
    const known =
      err instanceof HooklineError ? err : new HooklineError("internal", "internal server error");
    if (!(err instanceof HooklineError)) log.error(`${c.req.method} ${c.req.path}`, err);
    if (err instanceof StorageUnavailable) {
      log.error(`${c.req.method} ${c.req.path}: storage failed`, err.cause);
      c.header("Retry-After", "5");
    }
    return c.json(toProblem(known), httpStatus(known.code) as 500, {
      "content-type": "application/problem+json",
    });
  });
  app.notFound(() => {
    throw new HooklineError("not_found", "no such route");
  });
}
