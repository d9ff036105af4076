import { sameSecret } from "../secrets.ts";
import {
  type ConnectionVars,
  fresh,
  hmac,
  type InboundRequest,
  refuse,
  type Verdict,
} from "./verdict.ts";

/**
 * The key of a Standard Webhooks secret: base64 after `whsec_` (the prefix is optional).
 * @example signingKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").length // 24
 */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ""), "base64");
}

/**
 * Whether a Standard Webhooks signature holds: one of the space-separated `v1,<base64>` in
 * `webhook-signature` is the HMAC-SHA256 of `<id>.<timestamp>.<body>`.
 */
function standardSignature(req: InboundRequest, secret: string): string | null {
  const id = req.headers.get("webhook-id")?.trim();
  const timestamp = req.headers.get("webhook-timestamp")?.trim();
  const signatures = req.headers.get("webhook-signature")?.trim();
  if (!id || !timestamp || !signatures) {
    return "webhook-id, webhook-timestamp and webhook-signature are all required";
  }
  if (!fresh(timestamp, req.now)) return "webhook-timestamp is not within 5 minutes of now";
  const expected = `v1,${hmac(signingKey(secret), `${id}.${timestamp}.`, req.body).toString("base64")}`;
  // Every candidate is compared, so the time taken does not say which one matched.
  let ok = false;
  for (const candidate of signatures.split(" ")) ok = sameSecret(candidate, expected) || ok;
  return ok ? null : "webhook-signature does not match the body";
}

/**
 * An HTTP connection's request: with `auth` set (`Bearer <token>` or `Basic <base64>`), the
 * `Authorization` header must be exactly that; with `signing_secret` set (`whsec_…`), a valid
 * Standard Webhooks signature is required; both set, both. Neither: refused, the connection is
 * not ready. Any content type; `event_type` is the lower-case method and `data` is `webhook`
 * (the route's webhook data of the request).
 * @example verifyHttp(req, (n) => (n === "auth" ? "Bearer t0ken" : undefined), data)
 */
export function verifyHttp(req: InboundRequest, vars: ConnectionVars, webhook: unknown): Verdict {
  const auth = vars("auth");
  const signing = vars("signing_secret");
  if (!auth && !signing) {
    return refuse(403, "this connection has no auth or signing_secret: requests are refused");
  }
  if (auth) {
    const given = req.headers.get("authorization");
    if (!given) return refuse(401, "Authorization is missing");
    if (!sameSecret(given.trim(), auth.trim())) return refuse(401, "Authorization does not match");
  }
  if (signing) {
    const problem = standardSignature(req, signing);
    if (problem) return refuse(401, problem);
  }
  const delivery =
    req.headers.get("webhook-id")?.trim() || req.headers.get("idempotency-key")?.trim() || null;
  return {
    kind: "events",
    delivery,
    events: [{ event_type: req.method.toLowerCase(), data: webhook }],
  };
}
