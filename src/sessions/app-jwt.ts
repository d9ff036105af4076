import { encodeJwt } from "../connections/github-app.ts";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import { refusal } from "./python-errors.ts";

/**
 * `encode_jwt(payload, connection, algorithm)` travels as a `store` message with this `op` and
 * `args: [payload, connection, algorithm]`, without a step number: PyGithub asks for a JWT from
 * an activity's thread whenever its installation token runs out, so the request is answered
 * outside the journal (a replay asks again, as it runs the activity again), never recorded.
 */
export const APP_JWT_OP = "encode_jwt";

/** Whether a step is a session's request for a GitHub App JWT. */
export const isAppJwtRequest = (req: StepRequest): boolean =>
  "fields" in req && req.kind === "store" && req.fields.op === APP_JWT_OP;

/**
 * The answer to a session's `encode_jwt`: the JWT signed in the service with the App private
 * key `appKey` finds for the connection (session-env.ts), or the refusal the workflow raises.
 * @example serveAppJwt({ kind: "store", fields: { op: "encode_jwt", args: [claims, "gh", "RS256"] } }, appKey)
 */
export function serveAppJwt(
  req: StepRequest,
  appKey: ((connection: string) => string | undefined) | undefined,
): StepReply {
  try {
    const args = "fields" in req ? req.fields.args : undefined;
    const [payload, connection, algorithm] = Array.isArray(args) ? args : [];
    return { ok: true, value: encodeJwt({ payload, connection, algorithm }, appKey ?? noKey) };
  } catch (e) {
    return refusal(e);
  }
}

const noKey = () => undefined;
