import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineCommand } from "citty";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeIo, fakeService, json, problem, type Seen } from "../../test/support/cli.ts";
import { sessionRecord, T } from "../../test/support/records.ts";
import type { SessionRecord } from "../model/records.ts";
import deployCommand from "./deploy.ts";
import type { Io } from "./io.ts";
import { run } from "./main.ts";

type Routes = Record<string, (req: Seen, res: ServerResponse) => void>;

let svc: Awaited<ReturnType<typeof fakeService>>;
let routes: Routes;
let tmp: string;

beforeEach(async () => {
  routes = {};
  svc = await fakeService((req, res) => {
    const route = routes[`${req.method} ${req.url}`];
    if (route) route(req, res);
    else problem(res, 404, `no route ${req.method} ${req.url}`);
  });
  tmp = await mkdtemp(join(tmpdir(), "hookline-cmd-"));
});

afterEach(async () => {
  await svc.close();
  await rm(tmp, { recursive: true, force: true });
});

async function cli(
  argv: string[],
  opts: { stdin?: string; cwd?: string; root?: (io: Io) => ReturnType<typeof defineCommand> } = {},
) {
  const captured = fakeIo({ env: { SVC_URL: svc.url, SVC_API_TOKEN: "tok" }, ...opts });
  const code = await run(argv, captured.io, opts.root?.(captured.io));
  return { code, out: captured.out, err: captured.err };
}

const t = T;
const record = sessionRecord;

describe("management commands", () => {
  it("prints an API error's detail and exits 1", async () => {
    routes["GET /api/v1/envs"] = (_q, res) => problem(res, 401, "missing or wrong API token");
    const r = await cli(["env", "list"]);
    expect(r).toEqual({ code: 1, out: [], err: ["error: missing or wrong API token"] });
  });

  it("trigger list asks for a project's triggers", async () => {
    routes["GET /api/v1/triggers?project=demo"] = (_q, res) => json(res, 200, { triggers: [] });
    expect(await cli(["trigger", "list", "--project", "demo"])).toEqual({
      code: 0,
      out: ["no triggers"],
      err: [],
    });
    expect(svc.seen[0]?.headers.authorization).toBe("Bearer tok");
  });

  it("env list", async () => {
    routes["GET /api/v1/envs"] = (_q, res) =>
      json(res, 200, { envs: [{ id: "env_1", project: "demo", name: "default" }] });
    expect((await cli(["env", "list"])).out).toEqual(["env_1  demo/default"]);
  });

  it("project list", async () => {
    routes["GET /api/v1/projects"] = (_q, res) =>
      json(res, 200, { projects: [{ id: "prj_1", name: "demo", active_deployment_id: null }] });
    expect((await cli(["project", "list"])).out).toEqual([
      "NAME  ID     ACTIVE_DEPLOYMENT",
      "demo  prj_1  -",
    ]);
  });

  it("var set sends the value and never prints it", async () => {
    routes["PUT /api/v1/envs/demo/vars/TOKEN"] = (_q, res) => json(res, 200, { project: "demo" });
    const r = await cli(["var", "set", "--secret", "--env", "demo", "TOKEN", "s3cret"]);
    expect(r).toEqual({ code: 0, out: ['var "TOKEN" set in demo/default'], err: [] });
    expect(JSON.parse(svc.seen[0]?.body ?? "")).toEqual({ value: "s3cret", secret: true });
  });

  it("var set reads stdin when VALUE is absent, dropping one newline", async () => {
    routes["PUT /api/v1/envs/env_1/vars/KEY"] = (_q, res) => json(res, 200, {});
    const r = await cli(["var", "set", "--env", "env_1", "KEY"], { stdin: "line1\nline2\n\n" });
    expect(r.code).toBe(0);
    expect(r.out).toEqual(['var "KEY" set in env_1']);
    expect(JSON.parse(svc.seen[0]?.body ?? "")).toEqual({ value: "line1\nline2\n", secret: false });
  });

  it("var list and var delete", async () => {
    routes["GET /api/v1/envs/demo/vars"] = (_q, res) =>
      json(res, 200, {
        vars: [
          {
            name: "GREETING",
            value: "hi",
            secret: false,
            source: "manifest",
            description: "How the bot\n  says hello",
          },
          { name: "TOKEN", value: "********", secret: true, source: "cli", description: "" },
        ],
      });
    routes["DELETE /api/v1/envs/demo/vars/TOKEN"] = (_q, res) =>
      json(res, 200, { project: "demo" });
    expect((await cli(["var", "list", "--env", "demo"])).out).toEqual([
      "NAME      SECRET  SOURCE    VALUE     DESCRIPTION",
      "GREETING  no      manifest  hi        How the bot says hello",
      "TOKEN     yes     cli       ********",
    ]);
    expect((await cli(["var", "delete", "--env", "demo", "TOKEN"])).out).toEqual([
      'var "TOKEN" deleted from demo/default',
    ]);
  });
});

describe("session commands", () => {
  it("session list passes its filters", async () => {
    routes["GET /api/v1/sessions?project=demo&state=error&limit=5"] = (_q, res) =>
      json(res, 200, { sessions: [record({ state: "error" })] });
    const r = await cli(["session", "list", "-p", "demo", "--state", "error", "--limit", "5"]);
    expect(r.code).toBe(0);
    expect(r.out[1]).toBe(`ses_01  demo     hook     error  ${t}`);
  });

  it("session list --before asks for the page older than that session", async () => {
    routes["GET /api/v1/sessions?limit=1&before=ses_02"] = (_q, res) =>
      json(res, 200, { sessions: [record({ state: "error" })], more: true, next: "ses_01" });
    const r = await cli(["session", "list", "--before", "ses_02", "--limit", "1"]);
    expect([r.code, r.err]).toEqual([0, ["showing the newest 1; older ones with --before ses_01"]]);
  });

  it("session log ends with the error and traceback", async () => {
    routes["GET /api/v1/sessions/ses_01/log"] = (_q, res) =>
      json(res, 200, {
        session: record({ state: "error", error: { message: "boom", traceback: "Traceback\n" } }),
        entries: [
          { t, kind: "state", state: "running" },
          { t, kind: "print", text: "hello", stream: "stdout" },
        ],
      });
    const r = await cli(["session", "log", "ses_01"]);
    expect(r.out).toEqual([
      "session ses_01 demo/hook (handlers.py:on_hook, async) error",
      `${t} state: running`,
      `${t} print: hello`,
      "error: boom",
      "Traceback",
    ]);
    expect(r.code).toBe(0);
  });

  it("session prints of a project reads its newest session", async () => {
    routes["GET /api/v1/sessions?project=demo&limit=1"] = (_q, res) =>
      json(res, 200, { sessions: [record({ id: "ses_new" })] });
    routes["GET /api/v1/sessions/ses_new/prints"] = (_q, res) =>
      json(res, 200, { prints: [{ t, text: "hi", stream: "stdout" }] });
    expect((await cli(["session", "prints", "demo"])).out).toEqual([`[${t}] hi`]);
    expect((await cli(["session", "prints", "demo", "--no-timestamps"])).out).toEqual(["hi"]);
  });

  it("session prints of a session id, and of a project with no sessions", async () => {
    routes["GET /api/v1/sessions/ses_9/prints"] = (_q, res) =>
      json(res, 200, { prints: [{ t, text: "a", stream: "stdout" }] });
    routes["GET /api/v1/sessions?project=empty&limit=1"] = (_q, res) =>
      json(res, 200, { sessions: [] });
    expect((await cli(["session", "prints", "ses_9"])).out).toEqual([`[${t}] a`]);
    expect(await cli(["session", "prints", "empty"])).toEqual({
      code: 1,
      out: [],
      err: ['error: project "empty" has no sessions'],
    });
  });

  it("session stop", async () => {
    routes["POST /api/v1/sessions/ses_01/stop"] = (_q, res) =>
      json(res, 200, { session: record({ state: "completed" }) });
    expect((await cli(["session", "stop", "ses_01"])).out).toEqual(["session ses_01: completed"]);
  });

  const stream = (end: SessionRecord) => (_q: Seen, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(`data: ${JSON.stringify({ t, kind: "print", text: "hi", stream: "stdout" })}\n\n`);
    res.write(`event: end\ndata: ${JSON.stringify(end)}\n\n`);
  };

  it("session watch prints live until the end and exits 0", async () => {
    routes["GET /api/v1/sessions/ses_01/watch"] = stream(record());
    expect(await cli(["session", "watch", "ses_01"])).toEqual({
      code: 0,
      out: [`${t} print: hi`, "session ses_01: completed"],
      err: [],
    });
  });

  it("session watch exits 1 when the session ends in error", async () => {
    routes["GET /api/v1/sessions/ses_01/watch"] = stream(
      record({ state: "error", error: { message: "boom" } }),
    );
    const r = await cli(["session", "watch", "ses_01"]);
    expect(r.code).toBe(1);
    expect(r.out).toEqual([`${t} print: hi`, "session ses_01: error", "error: boom"]);
  });
});

describe("deploy", () => {
  class ManifestError extends Error {
    issues = [{ line: 7, path: "triggers[0].is_sync", message: "expected boolean" }];
    constructor() {
      super(
        "manifest.yaml:7: triggers[0].is_sync: expected boolean\nmanifest.yaml:9: x: unknown key",
      );
      this.name = "ManifestError";
    }
  }
  const good = () => ({});
  const bad = () => {
    throw new ManifestError();
  };
  const withParse = (parse: (text: string, file: string) => unknown) => (io: Io) =>
    defineCommand({ subCommands: { deploy: deployCommand(io, parse) } });
  /** A deploy answer with nothing in it; `lines` stays empty: the CLI renders the steps. */
  const answer = () => ({
    project_id: "prj_1",
    deployment_id: "dep_1",
    plan: [],
    exec: [],
    triggers: [],
    progress: [],
    lines: [],
  });

  beforeEach(async () => {
    await mkdir(join(tmp, "demo", "__pycache__"), { recursive: true });
    await writeFile(join(tmp, "demo", "manifest.yaml"), "version: v2\n");
    await writeFile(join(tmp, "demo", "handlers.py"), "def f(e): pass\n");
    await writeFile(join(tmp, "demo", "__pycache__", "x.pyc"), "x");
  });

  it("uploads the folder and prints progress to stderr, lines to stdout", async () => {
    routes["POST /api/v1/deploy"] = (_q, res) =>
      json(res, 200, {
        ...answer(),
        progress: ["creating the Python environment…"],
        plan: [
          {
            kind: "project",
            name: "demo",
            subject: "demo",
            action: "create",
            state: "not found, will create",
          },
        ],
        exec: [{ op: "activate_deployment", id: "dep_1", result: "activated" }],
      });
    const r = await cli(["deploy"], { cwd: join(tmp, "demo"), root: withParse(good) });
    expect(r).toEqual({
      code: 0,
      out: [
        '[plan] project "demo": not found, will create',
        "[exec] activate_deployment: activated",
      ],
      err: ["creating the Python environment…"],
    });
    expect(JSON.parse(svc.seen[0]?.body ?? "")).toEqual({
      manifest: "version: v2\n",
      manifest_file: "manifest.yaml",
      files: { "handlers.py": Buffer.from("def f(e): pass\n").toString("base64") },
    });
  });

  it("falls back to autokitteh.yaml and takes repeated --file", async () => {
    await rm(join(tmp, "demo", "manifest.yaml"));
    await writeFile(join(tmp, "demo", "autokitteh.yaml"), "version: v1\n");
    await writeFile(join(tmp, "demo", "other.py"), "");
    await writeFile(join(tmp, "demo", "third.py"), "");
    routes["POST /api/v1/deploy"] = (_q, res) => json(res, 200, answer());
    const r = await cli(["deploy", "--file", "handlers.py", "--file=other.py"], {
      cwd: join(tmp, "demo"),
      root: withParse(good),
    });
    expect(r.code).toBe(0);
    const body = JSON.parse(svc.seen[0]?.body ?? "");
    expect(body.manifest_file).toBe("autokitteh.yaml");
    expect(Object.keys(body.files).sort()).toEqual(["handlers.py", "other.py"]);
  });

  it("prints manifest issues without a prefix, sends nothing, exits 1", async () => {
    const r = await cli(["deploy", "--manifest", "demo/manifest.yaml"], {
      cwd: tmp,
      root: withParse(bad),
    });
    expect(r).toEqual({
      code: 1,
      out: [],
      err: [
        "manifest.yaml:7: triggers[0].is_sync: expected boolean",
        "manifest.yaml:9: x: unknown key",
      ],
    });
    expect(svc.seen).toEqual([]);
  });

  it("checks the manifest with src/manifest by default", async () => {
    await writeFile(join(tmp, "demo", "manifest.yaml"), "version: v2\nbogus: 1\n");
    const r = await cli(["deploy"], { cwd: join(tmp, "demo") });
    expect(r.code).toBe(1);
    expect(r.err.length).toBeGreaterThan(0);
    for (const line of r.err) expect(line).toMatch(/^manifest\.yaml:\d+: /);
    expect(svc.seen).toEqual([]);
  });

  it("prints a failed build's multi-line detail after error:", async () => {
    routes["POST /api/v1/deploy"] = (_q, res) =>
      problem(res, 422, "handlers.py:1: SyntaxError\n  def f(:");
    const r = await cli(["deploy", "-m", "demo/manifest.yaml"], {
      cwd: tmp,
      root: withParse(good),
    });
    expect(r).toEqual({ code: 1, out: [], err: ["error: handlers.py:1: SyntaxError\n  def f(:"] });
  });

  it("renders every kind of step from the answer's data, as the contract spells them", async () => {
    const step = (kind: string, name: string, subject: string, action: string, state: string) => ({
      kind,
      name,
      subject,
      action,
      state,
    });
    routes["POST /api/v1/deploy"] = (_q, res) =>
      json(res, 200, {
        ...answer(),
        plan: [
          step("project", "demo", "demo", "keep", "found, no changes needed"),
          step("var", "GREETING", "demo/GREETING", "create", "not found, will set"),
          step("var", "OLD", "demo/OLD", "delete", "found, will delete"),
          step("trigger", "hook", "demo:/hook", "create", "not found, will create"),
          step("trigger", "kept", "demo:/kept", "keep", "found, no changes needed"),
          step("trigger", "gone", "demo:/gone", "delete", "found, will delete"),
          step("trigger", "other", "demo:/other", "update", "found, will update"),
        ],
        exec: [
          { op: "set_var", subject: "demo/GREETING", id: "env_1", result: "updated" },
          { op: "delete_var", subject: "demo/OLD", id: "env_1", result: "deleted" },
          { op: "create_trigger", subject: "demo:/hook", id: "trg_1", result: "created" },
          { op: "delete_trigger", subject: "demo:/gone", id: "trg_3", result: "deleted" },
          { op: "update_trigger", subject: "demo:/other", id: "trg_4", result: "updated" },
          { op: "create_build", id: "bld_1", result: "created" },
          { op: "create_deployment", id: "dep_1", result: "created" },
          { op: "activate_deployment", id: "dep_1", result: "activated" },
        ],
        triggers: [
          { id: "trg_1", name: "hook", webhook_id: "w1", webhook_path: "/webhooks/w1" },
          { id: "trg_2", name: "kept", webhook_id: "w2", webhook_path: "/webhooks/w2" },
          { id: "trg_4", name: "other", webhook_id: "w4", webhook_path: "/webhooks/w4" },
        ],
      });
    const r = await cli(["deploy"], { cwd: join(tmp, "demo"), root: withParse(good) });
    expect(r.err).toEqual([]);
    expect(r.out).toEqual([
      '[plan] project "demo": found, no changes needed',
      '[plan] var "demo/GREETING": not found, will set',
      '[plan] var "demo/OLD": found, will delete',
      '[plan] trigger "demo:/hook": not found, will create',
      '[plan] trigger "demo:/kept": found, no changes needed',
      '[plan] trigger "demo:/gone": found, will delete',
      '[plan] trigger "demo:/other": found, will update',
      '[exec] set_var "demo/GREETING": env_1 updated',
      '[exec] delete_var "demo/OLD": env_1 deleted',
      '[exec] create_trigger "demo:/hook": trg_1 created',
      // The whole URL too, ready to copy: the service's as the CLI reaches it (SVC_URL).
      `[exec] trigger "hook" created, webhook path is "/webhooks/w1", URL ${svc.url}/webhooks/w1`,
      '[exec] delete_trigger "demo:/gone": trg_3 deleted',
      '[exec] update_trigger "demo:/other": trg_4 updated',
      '[exec] create_build: created "bld_1"',
      '[exec] create_deployment: created "dep_1"',
      "[exec] activate_deployment: activated",
    ]);
  });

  it("refuses an answer of another shape in one error line", async () => {
    routes["POST /api/v1/deploy"] = (_q, res) =>
      json(res, 200, { lines: ["[exec] activate_deployment: activated"], progress: [] });
    const r = await cli(["deploy"], { cwd: join(tmp, "demo"), root: withParse(good) });
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^error: the service answered the deploy with an unexpected shape \(/);
  });

  it("refuses a missing manifest in one line", async () => {
    expect(await cli(["deploy"], { cwd: tmp, root: withParse(good) })).toEqual({
      code: 1,
      out: [],
      err: [`error: no manifest.yaml (or autokitteh.yaml) in ${tmp}; name one with --manifest`],
    });
    expect(
      (await cli(["deploy", "-m", "nope.yaml"], { cwd: tmp, root: withParse(good) })).err,
    ).toEqual(["error: cannot read nope.yaml: no such file"]);
  });
});
