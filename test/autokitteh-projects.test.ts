import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { run as runCli } from "../src/cli/main.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot } from "./support/python.ts";
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
  vars?: Record<string, Record<string, string | number>>;
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
};

const savedPath = process.env.PYTHONPATH;
// The sessions' Python finds the stand-in packages on PYTHONPATH, which the service passes to
// its workers: set before the emulator starts (hooks run in order).
beforeAll(() => {
  process.env.PYTHONPATH = [...STAND_INS, savedPath].filter(Boolean).join(delimiter);
});
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
    expect(r, argv.join(" ")).toMatchObject({ code: 0, err: [] });
    return r.out;
  };
  /** The sessions a start made, once each has ended, with what each printed. */
  const finished = async (ids: string[]) => {
    const out: { record: SessionRecord; prints: string[] }[] = [];
    for (const id of ids) out.push({ record: await emu.ended(id), prints: await emu.prints(id) });
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
    const secret = String(p.vars![conn]!["jira" in r ? "webhook_secret" : "pat_secret"]);
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
      for (const [conn, vars] of Object.entries(p.vars ?? {})) {
        for (const [key, value] of Object.entries(vars)) {
          const text = String(value).replace("$API", api.url);
          await ok("var", "set", "--connection", `${name}/${conn}`, "--secret", key, text);
        }
      }
      if (p.vars) {
        const listed = await ok("connection", "list", "--project", name);
        for (const conn of Object.keys(p.vars)) {
          expect(listed.find((l) => l.startsWith(`${conn} `))).toMatch(/\sready\s/);
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
      const made = api.received.slice(calls).map((c) => `${c.method} ${c.path}`);
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
