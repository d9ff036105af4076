import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isAppJwtRequest, serveAppJwt } from "./app-jwt.ts";

const pem = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const jwtRequest = ([payload, connection, algorithm]: unknown[]) =>
  ({ kind: "encode_jwt", fields: { payload, connection, algorithm } }) as const;

describe("a session's encode_jwt, answered outside the journal", () => {
  it("is told from the other requests", () => {
    expect(isAppJwtRequest(jwtRequest([{}, "gh", "RS256"]))).toBe(true);
    expect(isAppJwtRequest({ kind: "store", fields: { op: "get", key: "k", args: [] } })).toBe(
      false,
    );
    expect(isAppJwtRequest({ kind: "sleep", ms: 1 })).toBe(false);
  });

  it("answers a JWT, or the ValueError the workflow raises", () => {
    const appKey = (c: string) => (c === "gh" ? pem : undefined);
    const ok = serveAppJwt(jwtRequest([{ iss: 1 }, "gh", "RS256"]), appKey);
    expect(ok).toMatchObject({
      ok: true,
      value: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(serveAppJwt(jwtRequest([{ iss: 1 }, "other", "RS256"]), appKey)).toEqual({
      ok: false,
      error: "ValueError",
      message: expect.stringContaining('connection "other" has no GitHub App private key'),
    });
    // The command that sets the key names the session's project.
    expect(serveAppJwt(jwtRequest([{ iss: 1 }, "other", "RS256"]), appKey, "triage")).toMatchObject(
      {
        message: expect.stringContaining(
          "cli var set --connection triage/other --secret private_key",
        ),
      },
    );
    expect(serveAppJwt(jwtRequest([{ iss: 1 }, "gh", "RS256"]), undefined)).toMatchObject({
      ok: false,
      error: "ValueError",
    });
  });
});
