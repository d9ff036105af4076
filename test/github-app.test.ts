import { generateKeyPairSync } from "node:crypto";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { type GithubAppApi, githubAppApi } from "./support/github-app-api.ts";
import { pygithubFolder } from "./support/pygithub.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { githubDelivery } from "./support/signing.ts";

/**
 * A github connection connected as a GitHub App installation (issue 30): PyGithub in a real
 * session authenticates as the installation with JWTs the service signs (`encode_jwt`), against a
 * stand-in GitHub that verifies them with the App's public key; the private key never reaches
 * the session, a print, a log or an API answer.
 */
const APP_ID = 4242;
const INSTALLATION = 77;
const HOOK_SECRET = "gh-app-hook-s3cret";
const SERVICE_HOOK_SECRET = "svc-app-hook-s3cret";
const pem = (k: ReturnType<typeof generateKeyPairSync>["privateKey"]) =>
  k.export({ type: "pkcs1", format: "pem" }).toString();
const app = generateKeyPairSync("rsa", { modulusLength: 2048 });
const APP_KEY = pem(app.privateKey);
const WRONG_KEY = pem(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey);
/** A line from the middle of a key: what would show if any of it leaked. */
const middle = (key: string) => key.split("\n")[5]!;
const saved = { PYTHONPATH: process.env.PYTHONPATH, key: process.env.SVC_GITHUB_PRIVATE_KEY };

// Before the emulator starts: its sessions' Python finds PyGithub on PYTHONPATH, and the service's
// own App (auth_type oauthDefault) has its key and webhook secret in the service's env.
beforeAll(async () => {
  const folder = await pygithubFolder(await testPython());
  process.env.PYTHONPATH = [folder, saved.PYTHONPATH].filter(Boolean).join(delimiter);
  process.env.SVC_GITHUB_PRIVATE_KEY = APP_KEY.replaceAll("\n", "\\n"); // one line, as in a .env
  process.env.SVC_GITHUB_WEBHOOK_SECRET = SERVICE_HOOK_SECRET;
}, 600_000);
afterAll(() => {
  for (const [name, value] of [
    ["PYTHONPATH", saved.PYTHONPATH],
    ["SVC_GITHUB_PRIVATE_KEY", saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  delete process.env.SVC_GITHUB_WEBHOOK_SECRET;
});

describe("a github connection as a GitHub App installation", () => {
  const emu = useEmulator();
  let gh: GithubAppApi;
  let inbound = "";
  const cli = async (...argv: string[]) => cliIn(undefined, ...argv);
  /** The CLI with `stdin` as its input: a PEM key goes in there (an argument cannot start with -). */
  const cliIn = async (stdin: string | undefined, ...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url }, stdin });
    const code = await runCli(argv, io);
    const errors = err.filter((line) => !line.startsWith("deploying… "));
    expect({ code, err: errors }).toEqual({ code: 0, err: [] });
    return out;
  };
  const setVar = (name: string, value: string) =>
    cli("var", "set", "--connection", "ghapp/gh", name, value);
  const setSecret = (name: string, value: string) =>
    cliIn(value, "var", "set", "--connection", "ghapp/gh", "--secret", name);
  const issue = (action: string, number: number, secret = HOOK_SECRET) =>
    githubDelivery(secret, "issues", {
      action,
      issue: { number },
      repository: { full_name: "octo/widgets" },
      installation: { id: INSTALLATION },
    });
  /** The one session a delivery starts, once it ended. */
  const sessionOf = async (init: RequestInit) => {
    const res = await fetch(inbound, init);
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    expect(session_ids).toHaveLength(1);
    const id = session_ids[0]!;
    return { id, end: (await emu.ended(id)) as { state: string; error?: { message: string } } };
  };

  beforeAll(async () => {
    gh = await githubAppApi(app.publicKey, APP_ID, INSTALLATION);
  });
  afterAll(() => gh?.close());

  it("is set up with the CLI: app id, installation id, the App's key and webhook secret", async () => {
    const out = await cli(
      "deploy",
      "--manifest",
      join(repoRoot, "test", "fixtures", "github-app", "autokitteh.yaml"),
    );
    const line = out.find((l) => l.includes('connection "gh": inbound path is')) ?? "";
    inbound = emu.url + /inbound path is "(\/inbound\/[0-9a-z]+)"/.exec(line)![1];
    await setVar("app_id", String(APP_ID));
    await setVar("install_id", String(INSTALLATION));
    await setVar("auth_type", "oauthPrivate");
    await setSecret("private_key", APP_KEY);
    await setSecret("webhook_secret", HOOK_SECRET);
    await setVar("base_url", gh.url);
    const listed = await cli("connection", "list", "--project", "ghapp");
    expect(listed.find((l) => l.startsWith("gh "))).toMatch(/github\s+ready/);
  });

  it("a session's PyGithub works as the installation, with a JWT the App's public key verifies", async () => {
    const { id, end } = await sessionOf(issue("opened", 7));
    expect(end.state, JSON.stringify(end)).toBe("completed");
    expect(await emu.prints(id)).toEqual([
      "repo octo/widgets issue #7",
      "private keys in the environment: []",
    ]);
    expect(gh.calls.map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
      `POST /app/installations/${INSTALLATION}/access_tokens 201`,
      "GET /repos/octo/widgets 200",
    ]);
    const { claims } = gh.calls[0]!;
    expect(claims).toMatchObject({ iss: APP_ID });
  });

  it("a durable session signs its JWT from the activity that needs it, outside the journal", async () => {
    const { id, end } = await sessionOf(issue("reopened", 8));
    expect(end.state, JSON.stringify(end)).toBe("completed");
    expect(await emu.prints(id)).toContain("repo octo/widgets issue #8");
    // The JWT request is no step: the journal holds the activity alone, and no JWT.
    const { journal } = await emu.api<{ journal: { kind: string }[] }>(`/sessions/${id}/log`);
    expect(journal.map((s) => s.kind)).toEqual(["activity"]);
    expect(JSON.stringify(journal)).not.toMatch(/eyJhbGciOiJSUzI1Ni/);
  });

  it("with a wrong private key GitHub refuses the JWT, and the session fails saying so", async () => {
    await setSecret("private_key", WRONG_KEY);
    const before = gh.calls.length;
    const { id, end } = await sessionOf(issue("opened", 9));
    expect(end.state).toBe("error");
    expect(end.error?.message).toMatch(/401.*A JSON web token could not be decoded/s);
    expect(gh.calls.slice(before).map((c) => `${c.path} ${c.status}`)).toEqual([
      `/app/installations/${INSTALLATION}/access_tokens 401`,
    ]);
    const log = JSON.stringify(await emu.api(`/sessions/${id}/log`));
    expect(log).not.toContain(middle(WRONG_KEY));
  });

  it("no key appears in an API answer, a print or a log", async () => {
    const answers = [
      await emu.api("/envs/ghapp/vars"),
      await emu.api("/connections?project=ghapp"),
      ...(await Promise.all(
        (
          await sessions()
        ).flatMap((s) => [emu.api(`/sessions/${s.id}/log`), emu.api(`/sessions/${s.id}/prints`)]),
      )),
    ].map((a) => JSON.stringify(a));
    for (const key of [APP_KEY, WRONG_KEY]) {
      for (const text of answers) expect(text).not.toContain(middle(key));
    }
    const listed = (await cli("var", "list", "--env", "ghapp")).join("\n");
    expect(listed).not.toContain(middle(WRONG_KEY));
  });

  it("a connection to the service's own App uses its SVC_GITHUB_* key and webhook secret", async () => {
    await cli("var", "delete", "--connection", "ghapp/gh", "private_key");
    await cli("var", "delete", "--connection", "ghapp/gh", "webhook_secret");
    await setVar("auth_type", "oauthDefault");
    const listed = await cli("connection", "list", "--project", "ghapp");
    expect(listed.find((l) => l.startsWith("gh "))).toMatch(/github\s+ready/);
    const refused = await fetch(inbound, issue("opened", 10, HOOK_SECRET));
    expect(refused.status).toBe(401);
    const { id, end } = await sessionOf(issue("opened", 11, SERVICE_HOOK_SECRET));
    expect(end.state, JSON.stringify(end)).toBe("completed");
    // The service's env reaches no session: SVC_ names are kept out of it.
    expect(await emu.prints(id)).toEqual([
      "repo octo/widgets issue #11",
      "private keys in the environment: []",
    ]);
  });

  const sessions = async () =>
    (await emu.api<{ sessions: SessionRecord[] }>("/sessions?project=ghapp&limit=100")).sessions;
});
