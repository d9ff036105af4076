import { generateKeyPairSync, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { appPrivateKey, appWebhookSecret, encodeJwt, signAppJwt } from "./github-app.ts";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PEM = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;

/** The JWT's header and claims, and whether its signature holds under `key`. */
function decode(jwt: string, key = publicKey) {
  const [h, p, s] = jwt.split(".") as [string, string, string];
  const json = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  const ok = verify("sha256", Buffer.from(`${h}.${p}`), key, Buffer.from(s, "base64url"));
  return { header: json(h), claims: json(p), ok };
}

const vars =
  (set: Record<string, string>) =>
  (name: string): string | undefined =>
    set[name] || undefined;

describe("GitHub App JWTs signed in the service", () => {
  it("signs RS256 JWTs that the App's public key verifies, and no other key", () => {
    const claims = { iat: 1_700_000_000, exp: 1_700_000_600, iss: 123 };
    const jwt = signAppJwt(claims, PEM, "RS256");
    expect(decode(jwt)).toEqual({ header: { alg: "RS256", typ: "JWT" }, claims, ok: true });
    expect(decode(jwt, other).ok).toBe(false);
    // PyGithub writes the App id as a string: taken too.
    expect(decode(signAppJwt({ ...claims, iss: "123" }, PEM, "RS256")).claims.iss).toBe("123");
  });

  it("refuses other algorithms, odd claims and a bad key, never quoting the key", () => {
    expect(() => signAppJwt({ iss: 1 }, PEM, "HS256")).toThrow("unsupported signing method: HS256");
    expect(() => signAppJwt([1], PEM, "RS256")).toThrow("payload must be a dict of claims");
    expect(() => signAppJwt({ exp: 1.5 }, PEM, "RS256")).toThrow('claim "exp" must be');
    expect(() => signAppJwt({ exp: { a: 1 } }, PEM, "RS256")).toThrow('claim "exp" must be');
    const broken = "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n";
    let message = "";
    try {
      signAppJwt({ iss: 1 }, broken, "RS256");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe("invalid GitHub private key: not a PEM private key");
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const ecPem = ec.export({ type: "pkcs8", format: "pem" }).toString();
    expect(() => signAppJwt({ iss: 1 }, ecPem, "RS256")).toThrow("not an RSA key");
  });

  it("encode_jwt names the connection that has no key, and the var to set", () => {
    const keyOf = (c: string) => (c === "gh" ? PEM : undefined);
    const jwt = encodeJwt({ payload: { iss: 7 }, connection: "gh", algorithm: "RS256" }, keyOf);
    expect(decode(jwt).claims).toEqual({ iss: 7 });
    expect(() =>
      encodeJwt({ payload: { iss: 7 }, connection: "other", algorithm: "RS256" }, keyOf),
    ).toThrow('connection "other" has no GitHub App private key: set its private_key');
    expect(() => encodeJwt({ payload: {}, connection: 3, algorithm: "RS256" }, keyOf)).toThrow(
      "connection must be a connection name",
    );
  });
});

describe("a GitHub App connection's settings", () => {
  const env = { SVC_GITHUB_PRIVATE_KEY: "svc\\nkey", SVC_GITHUB_WEBHOOK_SECRET: "svc-hook" };

  it("its own private_key and webhook_secret first; the service's App only for oauthDefault", () => {
    const own = vars({ private_key: "own", webhook_secret: "own-hook", auth_type: "oauthPrivate" });
    expect([appPrivateKey(own, env), appWebhookSecret(own, env)]).toEqual(["own", "own-hook"]);
    const service = vars({ auth_type: "oauthDefault" });
    // A one-line env value's `\n` is a line break, as AutoKitteh reads it.
    expect([appPrivateKey(service, env), appWebhookSecret(service, env)]).toEqual([
      "svc\nkey",
      "svc-hook",
    ]);
    const pat = vars({ auth_type: "pat" });
    expect([appPrivateKey(pat, env), appWebhookSecret(pat, env)]).toEqual([undefined, undefined]);
  });
});
