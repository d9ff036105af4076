import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { run as runCli } from "../src/cli/main.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { githubDelivery, jiraDelivery } from "./support/signing.ts";
import { type StandInApi, standInApi } from "./support/stand-in-api.ts";

/**
 * Issue 29's "done": the AutoKitteh projects listed in test/fixtures/autokitteh-projects/
 * projects.yaml, one or more per blocker, deploy unchanged with `cli deploy`, get their vars as
 * a user sets them, and run: by a webhook, by hand (`cli session start`), or by a signed Jira or
 * GitHub delivery, their clients talking to a stand-in API (`$API`). Real service, real Python.
 */
const FIXTURES = join(import.meta.dirname, "fixtures", "autokitteh-projects");
const STAND_INS = [
  join(repoRoot, "python-runtime", "tests", "stand_ins"),
  join(FIXTURES, "stand_ins"),
];

interface Project {
  dir: string;
  blocker: string;
  /** Real packages its client needs, `[requirement, module]`, pip-installed for the test. */
  packages?: [string, string][];
  /** Vars of the project itself (`cli var set --env`). */
  project_vars?: Record<string, string>;
  /** A connection's vars (`cli var set --connection`), and those set with `--secret`. */
  vars?: Record<string, Record<string, string | number>>;
  secrets?: Record<string, Record<string, string | number>>;
  descriptions?: Record<string, string>;
  run:
    | { webhook: string; body: unknown }
    | { manual: string; inputs?: Record<string, unknown> }
    | { jira: string; payload: unknown }
    | { github: string; event: string; payload: unknown };
  prints: string[];
  api?: string[];
}

const PROJECTS = parse(readFileSync(join(FIXTURES, "projects.yaml"), "utf8")) as Project[];
/** Answers of the stand-in API, by "METHOD /path": what the projects' clients call. */
const ROUTES: Parameters<typeof standInApi>[0] = {
  "POST /rest/api/2/issue/OPS-7/comment": (_base, body) => [
    201,
    { id: "10001", body: JSON.parse(body).body },
  ],
  "POST /v1beta/models/gemini-2.0-flash:generateContent": () => [
    200,
    { candidates: [{ content: { parts: [{ text: "A cat rested." }] } }] },
  ],
  "POST /token": () => [200, { access_token: "ya29.test", expires_in: 3600, token_type: "Bearer" }],
  "GET /v4/spreadsheets/abc": () => [
    200,
    { spreadsheetId: "abc", properties: { title: "Cats" }, sheets: [] },
  ],
  "GET /youtube/v3/channels": () => [
    200,
    { items: [{ id: "UC1", snippet: { title: "Kittens" } }] },
  ],
  "POST /": () => [200, { TableNames: ["cats", "dogs"] }],
  "GET /api/v10/users/@me": () => [200, { id: "9", username: "kitbot" }],
  "GET /crm/v3/objects/contacts": () => [200, { results: [{ id: "1" }, { id: "2" }] }],
  "POST /api/v2/roles/rol_1/users": () => [200, {}],
  "GET /api/1.0/users/me": () => [200, { data: { gid: "1", name: "Cat" } }],
  "POST /v1/pages": () => [200, { id: "p1", url: "https://notion.so/p1" }],
  "GET /v1/deals": () => [
    200,
    {
      success: true,
      data: [
        { title: "A", value: 5 },
        { title: "B", value: 10 },
      ],
    },
  ],
  "POST /api/v1/access_token": () => [200, { access_token: "rt1", token_type: "bearer" }],
  "GET /api/v1/me": () => [200, { name: "kitteh" }],
  "POST /bot123:abc/sendMessage": () => [200, { ok: true, result: { message_id: 7 } }],
  "GET /v2/users/me": () => [200, { id: "z1" }],
  "POST /tid/oauth2/v2.0/token": () => [200, { access_token: "graph-tok", expires_in: 3600 }],
  "GET /v1.0/users": () => [200, { value: [{ displayName: "Cat" }, { displayName: "Kit" }] }],
};

/** A Google service account's JSON key, a new RSA key, its tokens asked at `tokenUri`. */
function serviceAccount(tokenUri: string): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return JSON.stringify({
    type: "service_account",
    project_id: "hookline-test",
    private_key_id: "k1",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
    client_email: "bot@hookline-test.iam.gserviceaccount.com",
    client_id: "1",
    token_uri: tokenUri,
  });
}

/**
 * The folders the projects' real packages are pip-installed in, once per machine (the Python
 * tests' cache: python-runtime/tests/packages.py); pip failing fails the test, never skips it.
 */
async function packageFolders(): Promise<string[]> {
  const wanted = PROJECTS.flatMap((p) => p.packages ?? []);
  const script = [
    "import json, sys",
    `sys.path.insert(0, ${JSON.stringify(join(repoRoot, "python-runtime"))})`,
    "from tests.packages import installed",
    "print(json.dumps([installed(r, m) for r, m in json.load(sys.stdin)]))",
  ].join("\n");
  const r = await execa(await testPython(), ["-c", script], { input: JSON.stringify(wanted) });
  return JSON.parse(r.stdout) as string[];
}

const savedPath = process.env.PYTHONPATH;
// The sessions' Python finds the stand-in and real packages on PYTHONPATH, which the service
// passes to its workers: set before the emulator starts (hooks run in order).
beforeAll(async () => {
  const folders = [...STAND_INS, ...(await packageFolders())];
  process.env.PYTHONPATH = [...folders, savedPath].filter(Boolean).join(delimiter);
}, 900_000);
afterAll(() => {
  if (savedPath === undefined) delete process.env.PYTHONPATH;
  else process.env.PYTHONPATH = savedPath;
});

describe("AutoKitteh's projects run unchanged", () => {
  const emu = useEmulator();
  let api: StandInApi;
  beforeAll(async () => {
    api = await standInApi(ROUTES);
  });
  afterAll(() => api?.close());

  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    const code = await runCli(argv, io);
    return { code, out, err };
  };
  const ok = async (...argv: string[]) => {
    const r = await cli(...argv);
    // Standard error may say a slow step is under way (the deploy's progress), nothing more.
    expect(
      { code: r.code, errors: r.err.filter((l) => l.startsWith("error")) },
      argv.join(" "),
    ).toEqual({ code: 0, errors: [] });
    return r.out;
  };
  /** The sessions a start made, once each has ended, with what each printed on stdout. */
  const finished = async (ids: string[]) => {
    const out: { record: SessionRecord; prints: string[] }[] = [];
    for (const id of ids) {
      const record = await emu.ended(id);
      // Standard error carries the packages' own warnings (a Python version's end of life).
      const { prints } = await emu.api<{ prints: { text: string; stream: string }[] }>(
        `/sessions/${id}/prints`,
      );
      out.push({ record, prints: prints.filter((x) => x.stream === "stdout").map((x) => x.text) });
    }
    return out;
  };

  /** Starts the project's session(s) as its `run` says; returns their ids. */
  async function start(name: string, p: Project): Promise<string[]> {
    const r = p.run;
    if ("manual" in r) {
      const inputs = Object.entries(r.inputs ?? {}).flatMap(([k, v]) => [
        "--input",
        `${k}=${JSON.stringify(v)}`,
      ]);
      const out = await ok("session", "start", "-p", name, "-e", r.manual, ...inputs, "--watch");
      expect(out.at(-1)).toMatch(/^session ses_\w+: completed$/);
      return [/^session (ses_\w+):/.exec(out[0]!)![1]!];
    }
    if ("webhook" in r) {
      const { triggers } = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
        `/triggers?project=${name}`,
      );
      const path = triggers.find((t) => t.name === r.webhook)!.webhook_path;
      const res = await fetch(emu.url + path, { method: "POST", body: JSON.stringify(r.body) });
      expect(res.status).toBe(202);
      return [((await res.json()) as { session_id: string }).session_id];
    }
    const conn = "jira" in r ? r.jira : r.github;
    const { connections } = await emu.api<{
      connections: { name: string; inbound_path: string }[];
    }>(`/connections?project=${name}`);
    const url = emu.url + connections.find((c) => c.name === conn)!.inbound_path;
    const secret = String(p.secrets![conn]!["jira" in r ? "webhook_secret" : "pat_secret"]);
    const init =
      "jira" in r ? jiraDelivery(secret, r.payload) : githubDelivery(secret, r.event, r.payload);
    const res = await fetch(url, init);
    expect(res.status).toBe(202);
    return ((await res.json()) as { session_ids: string[] }).session_ids;
  }

  for (const p of PROJECTS) {
    it(`${p.dir}: ${p.blocker}`, async () => {
      const manifest = join(FIXTURES, p.dir, "autokitteh.yaml");
      const name = (parse(readFileSync(manifest, "utf8")) as { project: { name: string } }).project
        .name;
      await ok("deploy", "--manifest", manifest);
      const fill = (value: string | number) =>
        String(value)
          .replace("$API", api.url)
          .replace("$SERVICE_ACCOUNT", () => serviceAccount(`${api.url}/token`));
      for (const [key, value] of Object.entries(p.project_vars ?? {})) {
        await ok("var", "set", "--env", name, key, fill(value));
      }
      for (const [flags, given] of [
        [[], p.vars],
        [["--secret"], p.secrets],
      ] as const) {
        for (const [conn, vars] of Object.entries(given ?? {})) {
          for (const [key, value] of Object.entries(vars)) {
            await ok("var", "set", "--connection", `${name}/${conn}`, ...flags, key, fill(value));
          }
        }
      }
      const conns = new Set([...Object.keys(p.vars ?? {}), ...Object.keys(p.secrets ?? {})]);
      if (conns.size) {
        const listed = await ok("connection", "list", "--project", name);
        for (const conn of conns) {
          expect(listed.find((l) => l.startsWith(`${conn} `))).not.toMatch(/\sneeds\s/);
        }
      }
      const varList = await ok("var", "list", "--env", name);
      for (const [key, text] of Object.entries(p.descriptions ?? {})) {
        expect(varList.find((l) => l.startsWith(`${key} `))).toMatch(new RegExp(`\\s${text}$`));
      }
      const calls = api.received.length;
      const runs = await finished(await start(name, p));
      for (const { record } of runs) expect(record.state, JSON.stringify(record)).toBe("completed");
      expect(runs.flatMap((x) => x.prints)).toEqual(p.prints);
      // The service's own calls are not the session's: a discord connection's gateway keeper asks
      // the stand-in for its gateway (and asks again, backing off, as the stand-in has none).
      const made = api.received
        .slice(calls)
        .map((c) => `${c.method} ${c.path}`)
        .filter((c) => !c.endsWith("/gateway/bot"));
      expect(made).toEqual(p.api ?? []);
    });
  }

  it("refuses a manual run of a function the deployment lacks, or bad inputs, in one line, starting nothing", async () => {
    const count = async () =>
      (await emu.api<{ sessions: unknown[] }>("/sessions?project=manual_report")).sessions.length;
    const before = await count();
    const missing = await cli("session", "start", "-p", "manual_report", "-e", "program.py:nope");
    expect(missing).toEqual({
      code: 1,
      out: [],
      err: ["error: entrypoint: program.py has no top-level function nope"],
    });
    const input = await cli(
      "session",
      "start",
      "-p",
      "manual_report",
      "-e",
      "program.py:on_manual_run",
      "-i",
      "days=two",
    );
    expect(input.code).toBe(1);
    expect(input.err).toEqual([
      `error: --input "days=two": "two" is not a JSON value (a string is quoted: days='"two"')`,
    ]);
    expect(await count()).toBe(before);
  });

  it("sent the Jira client's comment with the connection's email and token", () => {
    const comment = api.received.find((c) => c.path.endsWith("/comment"));
    const basic = Buffer.from("bot@example.com:jira-api-t0ken").toString("base64");
    expect(comment?.authorization).toBe(`Basic ${basic}`);
    expect(JSON.parse(comment!.body)).toEqual({
      body: "Triage: 'Disk full on db-2' from Ada Lovelace is queued.",
    });
  });
});
