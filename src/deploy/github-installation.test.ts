import { generateKeyPairSync, randomBytes, verify } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { keyedLock } from "../locks.ts";
import { createSecretBox } from "../secrets.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores } from "../storage/records.ts";
import { type InstallationDeps, saveInstallation } from "./github-installation.ts";
import { deploy } from "./index.ts";

/** saveInstallation: GitHub confirms the installation to the App's JWT, then its vars are set. */
const app = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PEM = app.privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const b64 = (text: string) => Buffer.from(text).toString("base64");
const MANIFEST = `version: v1
project:
  name: demo
  connections:
    - name: gh
      integration: github
      vars:
        - { name: base_url, value: "http://gh.test" }
    - name: sl
      integration: slack
`;

/** GitHub's `GET /app/installations/77`, answered only to a JWT App 4242's key signed. */
const github: typeof fetch = async (url, init) => {
  const jwt = String(new Headers(init?.headers).get("authorization")).replace(/^Bearer /, "");
  const [h, p, s] = jwt.split(".") as [string, string, string];
  const signed = verify(
    "sha256",
    Buffer.from(`${h}.${p}`),
    app.publicKey,
    Buffer.from(s, "base64url"),
  );
  const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
  if (!signed || claims.iss !== 4242) return Response.json({ message: "Bad JWT" }, { status: 401 });
  if (String(url) !== "http://gh.test/app/installations/77") {
    return Response.json({ message: "Not Found" }, { status: 404 });
  }
  return Response.json({
    id: 77,
    app_slug: "hookline-test",
    target_id: 9,
    target_type: "Organization",
    account: { login: "octo" },
    repository_selection: "selected",
    permissions: { issues: "write", metadata: "read" },
    events: ["issues", "issue_comment"],
    updated_at: "2026-11-01T10:00:00Z",
  });
};

let deps: InstallationDeps;
let projectId = "";
let changed: string[] = [];

beforeEach(async () => {
  const stores = createStores(createStorageFromUrl("memory:"));
  changed = [];
  const runtime = { check: async () => {}, run: () => null as never, dispose: async () => {} };
  const base = { stores, secrets: createSecretBox(randomBytes(32)), locks: keyedLock() };
  const ctx = { ...base, runtime, changed: (id: string) => void changed.push(id) };
  const files = { "h.py": b64("def f(event):\n    pass\n") };
  await deploy(ctx, { manifest: MANIFEST, manifest_file: "autokitteh.yaml", files });
  projectId = (await stores.projects.byName("demo"))!.project.id;
  changed = [];
  deps = { ...base, changed: ctx.changed, fetch: github, env: {} };
});

const varsOf = async () =>
  Object.fromEntries(
    (await deps.stores.projects.get(projectId))!.vars.map((v) => [v.name, v.value]),
  );

describe("saving a GitHub App installation", () => {
  it("with the service's App: GitHub confirms it, AutoKitteh's vars are set", async () => {
    deps.env = { SVC_GITHUB_APP_ID: "4242", SVC_GITHUB_PRIVATE_KEY: PEM };
    const saved = await saveInstallation(deps, projectId, "gh", "77");
    expect(saved).toEqual({
      app_id: "4242",
      app_name: "hookline-test",
      auth_type: "oauthDefault",
      install_id: "77",
      target_id: "9",
      target_name: "octo",
      target_type: "Organization",
      repositories: "selected",
      permissions: "issues:write metadata:read",
      events: "issues issue_comment",
      updated_at: "2026-11-01T10:00:00Z",
      install_key__4242__77: "octo",
    });
    expect(await varsOf()).toMatchObject({ gh__install_id: "77", gh__auth_type: "oauthDefault" });
    expect(changed).toEqual([projectId]);
  });

  it("refuses what GitHub does not confirm, and what is not a github connection, changing nothing", async () => {
    deps.env = { SVC_GITHUB_APP_ID: "4242", SVC_GITHUB_PRIVATE_KEY: PEM };
    const before = await varsOf();
    await expect(saveInstallation(deps, projectId, "gh", "78")).rejects.toThrow(
      "GitHub does not know installation 78 of App 4242 (404)",
    );
    await expect(saveInstallation(deps, projectId, "gh", "77; rm")).rejects.toThrow("is a number");
    await expect(saveInstallation(deps, projectId, "sl", "77")).rejects.toThrow(
      'demo has no github connection "sl"',
    );
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    deps.env.SVC_GITHUB_PRIVATE_KEY = other.export({ type: "pkcs1", format: "pem" }).toString();
    await expect(saveInstallation(deps, projectId, "gh", "77")).rejects.toThrow("(401)");
    deps.env = {};
    await expect(saveInstallation(deps, projectId, "gh", "77")).rejects.toThrow(
      "no GitHub App: set the connection's app_id and private_key, or the service's SVC_GITHUB_APP_ID",
    );
    expect(await varsOf()).toEqual(before);
    expect(changed).toEqual([]);
  });
});
