import { encodeJwt } from "../connections/github-app.ts";
import type { StepReply, StepRequest } from "../runtime/runtime.ts";
import { refusal } from "./python-errors.ts";

/**
 * Whether a step is a session's `encode_jwt(payload, connection, algorithm)`. It comes without a
 * step number: PyGithub asks for a JWT from an activity's thread whenever its installation token
 * runs out, so the request is answered outside the journal (a replay asks again, as it runs the
 * activity again), never recorded.
 */
export const isAppJwtRequest = (req: StepRequest): boolean => req.kind === "encode_jwt";

/**
 * The answer to a session's `encode_jwt`: the JWT signed in the service with the App private
 * key `appKey` finds for the connection (session-env.ts), or the refusal the workflow raises.
 * @example serveAppJwt({ kind: "encode_jwt", fields: { payload: claims, connection: "gh", algorithm: "RS256" } }, appKey)
 */
export function serveAppJwt(
  req: StepRequest,
  appKey: ((connection: string) => string | undefined) | undefined,
  project?: string,
): StepReply {
  try {
    const fields = "fields" in req ? req.fields : {};
    return { ok: true, value: encodeJwt(fields, appKey ?? noKey, project) };
  } catch (e) {
    return refusal(e);
  }
}

const noKey = () => undefined;
