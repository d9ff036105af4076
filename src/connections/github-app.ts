import { createPrivateKey, type KeyObject, sign } from "node:crypto";
import { HooklineError } from "../errors.ts";
import type { ConnectionVars } from "./verdict.ts";

/**
 * A github connection connected as a GitHub App installation, with AutoKitteh's var names:
 * `app_id`, `install_id`, `auth_type` (`oauthDefault`: the service's own App, whose settings are
 * the service's `SVC_GITHUB_*` env; `oauthPrivate`: the connection's own App, with its
 * `private_key`, `webhook_secret`, `client_id`, `client_secret`). The private key stays in the
 * service: sessions ask it to sign their App JWTs (`encode_jwt`), and never see the key.
 */

/** The var that holds an App's private key (PEM): withheld from sessions (session-env.ts). */
export const PRIVATE_KEY_VAR = "private_key";

/** `auth_type` of a connection to the service's own App (AutoKitteh's `oauthDefault`). */
export const SERVICE_APP = "oauthDefault";
/** `auth_type` of a connection to an App of its own (AutoKitteh's `oauthPrivate`). */
export const PRIVATE_APP = "oauthPrivate";

/**
 * The service's own GitHub App, from its env. AutoKitteh reads `GITHUB_APP_ID`,
 * `GITHUB_PRIVATE_KEY`, `GITHUB_WEBHOOK_SECRET`; here they carry the `SVC_` prefix, a
 * prefix the service keeps out of its sessions' environment (unprefixed, the key would reach
 * every session).
 */
export const SERVICE_APP_ENV = {
  appId: "SVC_GITHUB_APP_ID",
  privateKey: "SVC_GITHUB_PRIVATE_KEY",
  webhookSecret: "SVC_GITHUB_WEBHOOK_SECRET",
} as const;

type Env = Record<string, string | undefined>;

/** Whether a connection's vars say it is connected to the service's own App. */
export const usesServiceApp = (vars: ConnectionVars) => vars("auth_type") === SERVICE_APP;

/**
 * The private key (PEM) an App connection's JWTs are signed with: the connection's own
 * `private_key`, else the service's `SVC_GITHUB_PRIVATE_KEY` for a connection to the service's
 * App; undefined when neither applies. `\n` written as two characters (one-line env values, as
 * AutoKitteh accepts them) becomes a line break.
 * @example appPrivateKey((n) => (n === "private_key" ? pem : undefined)) // pem
 */
export function appPrivateKey(vars: ConnectionVars, env: Env = process.env): string | undefined {
  const own = vars(PRIVATE_KEY_VAR);
  const key = own ?? (usesServiceApp(vars) ? env[SERVICE_APP_ENV.privateKey] : undefined);
  return key ? key.replaceAll("\\n", "\n") : undefined;
}

/**
 * The secret an App connection's deliveries are signed with: its `webhook_secret`, else the
 * service's `SVC_GITHUB_WEBHOOK_SECRET` for a connection to the service's App.
 */
export function appWebhookSecret(vars: ConnectionVars, env: Env = process.env): string | undefined {
  if (vars("webhook_secret")) return vars("webhook_secret");
  return usesServiceApp(vars) ? env[SERVICE_APP_ENV.webhookSecret] || undefined : undefined;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/**
 * A JWT's claims: names to whole numbers (AutoKitteh's `encode_jwt` takes only these) or
 * strings (PyGithub writes `iss`, the App id, as a string; GitHub takes an App's client id too).
 */
function checkClaims(payload: unknown): Record<string, number | string> {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new HooklineError("bad_request", "encode_jwt: payload must be a dict of claims");
  }
  for (const [name, value] of Object.entries(payload)) {
    if (!Number.isSafeInteger(value) && typeof value !== "string") {
      throw new HooklineError(
        "bad_request",
        `encode_jwt: claim "${name}" must be an integer or a string`,
      );
    }
  }
  return payload as Record<string, number | string>;
}

/** The key of a PEM text; a text that is no RSA private key is refused without being quoted. */
function rsaKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new HooklineError("bad_request", "invalid GitHub private key: not a PEM private key");
  }
  if (key.asymmetricKeyType !== "rsa") {
    throw new HooklineError("bad_request", "invalid GitHub private key: not an RSA key");
  }
  return key;
}

/**
 * An RS256 JWT of `payload` (integer claims, as AutoKitteh's `encode_jwt` takes them) signed
 * with `privateKeyPem`: the compact form GitHub takes as `Authorization: Bearer …`. Only RS256
 * is signed, as GitHub asks and AutoKitteh does; errors never quote the key.
 * @example signAppJwt({ iat: now - 60, exp: now + 600, iss: 123 }, pem, "RS256") // "eyJhbGciOiJSUzI1NiIs…"
 */
export function signAppJwt(payload: unknown, privateKeyPem: string, algorithm: string): string {
  if (algorithm !== "RS256") {
    throw new HooklineError("bad_request", `unsupported signing method: ${algorithm}`);
  }
  const claims = checkClaims(payload);
  const key = rsaKey(privateKeyPem);
  const input = `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${sign("sha256", Buffer.from(input), key).toString("base64url")}`;
}

/**
 * Serves a session's `encode_jwt(payload, connection, algorithm)`: the JWT signed with the App
 * key of `connection` (`keyOf` finds it, from the connection's sealed var or the service's env).
 * A missing key's error names the command that sets it, for the session's `project`.
 * @example encodeJwt({ payload, connection: "gh", algorithm: "RS256" }, keyOf, "triage") // "eyJ…"
 */
export function encodeJwt(
  fields: { payload?: unknown; connection?: unknown; algorithm?: unknown },
  keyOf: (connection: string) => string | undefined,
  project = "<project>",
): string {
  const { payload, connection, algorithm } = fields;
  if (typeof connection !== "string" || !connection) {
    throw new HooklineError("bad_request", "encode_jwt: connection must be a connection name");
  }
  if (typeof algorithm !== "string") {
    throw new HooklineError("bad_request", "encode_jwt: algorithm must be a string");
  }
  const pem = keyOf(connection);
  if (!pem) {
    throw new HooklineError(
      "bad_request",
      `encode_jwt: connection "${connection}" has no GitHub App private key: set its ` +
        `${PRIVATE_KEY_VAR} (cli var set --connection ${project}/${connection} --secret ` +
        `${PRIVATE_KEY_VAR} …), or auth_type ${SERVICE_APP} with the service's ${SERVICE_APP_ENV.privateKey}`,
    );
  }
  return signAppJwt(payload, pem, algorithm);
}
