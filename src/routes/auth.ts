import type { Context, MiddlewareHandler } from "hono";
import { HooklineError } from "../errors.ts";
import { sameSecret } from "../secrets.ts";

/**
 * Whether an `Authorization: Bearer …` header carries `token` (compared in constant time).
 * @example tokenMatches("Bearer s3cret", "s3cret") // true
 */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return m ? sameSecret(m[1]!, token) : false;
}

/**
 * Refuses (401, with `WWW-Authenticate`) a request without the bearer token `token`.
 * @example checkBearer(c, token);
 */
export function checkBearer(c: Context, token: string): void {
  if (tokenMatches(c.req.header("authorization"), token)) return;
  c.header("WWW-Authenticate", 'Bearer realm="hookline"');
  throw new HooklineError("unauthorized", "a valid bearer token is required");
}

/**
 * Middleware that refuses (401) a request without the bearer token, but those `open` lets through.
 * @example api.use("*", bearerToken(token, (path) => path.endsWith("/openapi.json")));
 */
export function bearerToken(token: string, open: (path: string) => boolean): MiddlewareHandler {
  return async (c, next) => {
    if (!open(c.req.path)) checkBearer(c, token);
    return next();
  };
}
