import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ConnectionRecord, ProjectDoc, VarRecord } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { openParts, openStep, sealStep, sessionEnv } from "./session-env.ts";

const box = createSecretBox(randomBytes(32));
const t = "2026-11-28T00:00:00.000Z";

function doc(connections: [string, string][], vars: [string, string, boolean][]): ProjectDoc {
  const conns: ConnectionRecord[] = connections.map(([name, integration]) => ({
    ...{ id: `con_${name}`, name, integration, inbound_id: "", created_at: t, updated_at: t },
  }));
  const records: VarRecord[] = vars.map(([name, value, secret]) => ({
    ...{ env_id: "env_1", name, secret, source: "cli", updated_at: t },
    value: secret ? box.seal(value) : value,
  }));
  const project = { id: "prj_1", name: "mailbox" };
  return { project, connections: conns, vars: records } as unknown as ProjectDoc;
}

describe("a session's environment", () => {
  it("opens secrets and masks them; keeps the OAuth client secrets and App keys in the service", () => {
    const project = doc(
      [
        ["mail", "gmail"],
        ["gh", "github"],
      ],
      [
        ["mail__oauth_AccessToken", "ya29.token", true],
        ["mail__private_client_id", "own-app", false],
        ["mail__private_client_secret", "own-s3cret", true],
        ["gh__private_key", "-----BEGIN KEY-----", true],
        ["gh__app_id", "42", false],
      ],
    );
    const { env, redact, appKey } = sessionEnv(project, box);
    expect(env).toEqual({
      HOOKLINE_PROJECT: "mailbox", // what the SDK's hints name (cli connection authorize mailbox/…)
      mail__oauth_AccessToken: "ya29.token",
      mail__private_client_id: "own-app",
      gh__app_id: "42",
      mail__connection_id: "con_mail",
      gh__connection_id: "con_gh",
    });
    // Withheld, yet masked should a session come by it.
    expect(redact("own-s3cret ya29.token")).toBe("******** ********");
    expect(appKey("gh")).toBe("-----BEGIN KEY-----");
    expect(appKey("mail")).toBeUndefined();
  });

  it("gives a daemonApp connection its client secret: the session is the client there", () => {
    const project = doc(
      [["teams", "microsoft"]],
      [
        ["teams__auth_type", "daemonApp", false],
        ["teams__private_client_secret", "daemon-s3cret", true],
      ],
    );
    const { env, redact } = sessionEnv(project, box);
    expect(env.teams__private_client_secret).toBe("daemon-s3cret");
    expect(redact("daemon-s3cret")).toBe("********");
  });

  it("holds an auth0 connection's client_secret (its OAuth app's), not another's", () => {
    const project = doc(
      [
        ["a0", "auth0"],
        ["rd", "reddit"],
      ],
      [
        ["a0__client_id", "auth0-app", false],
        ["a0__client_secret", "auth0-s3cret", true],
        ["rd__client_secret", "reddit-s3cret", true],
      ],
    );
    const { env, redact } = sessionEnv(project, box);
    expect(env.a0__client_id).toBe("auth0-app");
    expect(env).not.toHaveProperty("a0__client_secret");
    expect(env.rd__client_secret).toBe("reddit-s3cret");
    expect(redact("auth0-s3cret")).toBe("********");
  });
});

describe("a value kept apart, sealed and opened", () => {
  it("seals its parts in place, each on its own, and opens them back; an opened step holds none", () => {
    const box = createSecretBox(randomBytes(32));
    const parts = ["cGFydCAw", "cGFydCAx"];
    const apart = { field: "result" as const, parts: 2, bytes: 12 };
    const step = { seq: 3, kind: "activity" as const, function: "m.f", apart, parts };
    const sealed = sealStep(box, step);
    expect(sealed.kind === "activity" && sealed.parts).toBe(parts); // the same array, sealed
    expect(parts.every((p) => p.startsWith("sealed:v1:"))).toBe(true);
    expect(openParts(box, 3, parts)).toEqual(["cGFydCAw", "cGFydCAx"]);
    expect(openStep(box, sealed)).toEqual({ seq: 3, kind: "activity", function: "m.f", apart });
  });
});
