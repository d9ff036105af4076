import { join } from "node:path";
import { execa } from "execa";
import { beforeEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, useEmulator } from "./support/emulator.ts";
import { repoRoot } from "./support/python.ts";
import { until } from "./support/until.ts";

/** The CLI as a user runs it (`node bin/cli.mjs …`), against a real service. */
const FIXTURES = join(import.meta.dirname, "fixtures");

/** `cli …` against the emulator `emu`; resolves with the process's result, whatever its exit. */
function cliOf(emu: EmulatorHandle) {
  return (args: string[], opts: { input?: string; cwd?: string } = {}) =>
    execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
      env: { SVC_URL: emu.url, XDG_DATA_HOME: join(emu.dataHome, "x"), SVC_API_TOKEN: "" },
      reject: false,
      ...opts,
    });
}

// A service of its own: a first deploy must find nothing there.
describe("cli against a fresh service", () => {
  const emu = useEmulator();
  const cli = cliOf(emu);

  it("deploys with [plan]/[exec] lines and prints the webhook path and whole URL", async () => {
    const r = await cli(["deploy", "--manifest", join(FIXTURES, "cli-v1/manifest.yaml")]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.slice(0, 5)).toEqual([
      '[plan] project "cli_demo": not found, will create',
      '[plan] var "cli_demo/GREETING": not found, will set',
      '[plan] var "cli_demo/OLD": not found, will set',
      '[plan] trigger "cli_demo:/hook": not found, will create',
      '[plan] trigger "cli_demo:/legacy": not found, will create',
    ]);
    expect(lines[5]).toMatch(/^\[exec\] create_project "cli_demo": prj_[0-9a-z]{26} created$/);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[exec\] trigger "hook" created, webhook path is "\/webhooks\/([0-9a-z]{26})", URL http:\/\/127\.0\.0\.1:\d+\/webhooks\/\1$/,
      ),
    );
    expect(lines.at(-3)).toMatch(/^\[exec\] create_build: created "bld_[0-9a-z]{26}"$/);
    expect(lines.at(-2)).toMatch(/^\[exec\] create_deployment: created "dep_[0-9a-z]{26}"$/);
    expect(lines.at(-1)).toBe("[exec] activate_deployment: activated");
  });
});

// Each test deploys the version it starts from (a deploy also resets what an earlier test set).
describe("cli against a running service", () => {
  const emu = useEmulator();
  const cli = cliOf(emu);
  const deployed = (version: string) => () => emu.deploy(join(FIXTURES, version)).then(() => {});

  describe("with cli-v1 deployed", () => {
    beforeEach(deployed("cli-v1"));

    it("redeploys: no changes needed, then updates, adds and deletes, keeping webhook paths", async () => {
      const before = await cli(["trigger", "list"]);
      const hookPath = /\/webhooks\/[0-9a-z]{26}/.exec(
        before.stdout.split("\n").find((l) => l.startsWith("hook "))!,
      )![0];
      const same = await cli(["deploy", "--manifest", join(FIXTURES, "cli-v1/manifest.yaml")]);
      expect(same.stdout).toContain('[plan] project "cli_demo": found, no changes needed');
      expect(same.stdout).toContain('[plan] trigger "cli_demo:/hook": found, no changes needed');
      expect(same.stdout).not.toContain("webhook path is");

      const changed = await cli(["deploy", "--manifest", join(FIXTURES, "cli-v2/manifest.yaml")]);
      expect(changed.exitCode).toBe(0);
      for (const line of [
        '[plan] var "cli_demo/GREETING": found, will update',
        '[plan] var "cli_demo/OLD": found, will delete',
        '[plan] trigger "cli_demo:/hook": found, will update',
        '[plan] trigger "cli_demo:/added": not found, will create',
        '[plan] trigger "cli_demo:/legacy": found, will delete',
      ]) {
        expect(changed.stdout).toContain(line);
      }
      const after = await cli(["trigger", "list", "--project", "cli_demo"]);
      expect(after.stdout).toContain(hookPath);
      expect(after.stdout).toContain("added");
      expect(after.stdout).not.toContain("legacy");
      // reuse_process: true shows after the kind, and only where set.
      const row = (name: string) => after.stdout.split("\n").find((l) => l.startsWith(`${name} `));
      expect(row("reused")).toMatch(
        /^reused +cli_demo +async, reuse process +\* +handlers\.py:on_hook /,
      );
      expect(row("hook")).not.toContain("reuse");
    });

    it("lists one trigger's sessions, from the API and the CLI alike", async () => {
      // Unchanged since beforeEach: the answer gives the webhook URLs.
      const urls = await emu.deploy(join(FIXTURES, "cli-v1"));
      const start = async (trigger: string) => {
        const res = await fetch(urls[trigger]!, { method: "POST" });
        const { session_id } = (await res.json()) as { session_id: string };
        await emu.ended(session_id);
        return session_id;
      };
      const hook = await start("hook");
      const legacy = [await start("legacy"), await start("legacy")];
      const api = (qs: string) => fetch(`${emu.url}/api/v1/sessions?${qs}`);
      type Listed = { sessions: { id: string }[]; more: boolean; total?: number };
      const list = async (qs: string) => (await (await api(qs)).json()) as Listed;

      const listed = await list("project=cli_demo&trigger=legacy");
      expect(listed.sessions.map((s) => s.id)).toEqual([...legacy].reverse());
      expect([listed.more, listed.total]).toEqual([false, 2]);
      // One page of one: more, and no total (the matches are not counted).
      const paged = await list("trigger=legacy&limit=1");
      expect(paged.sessions.map((s) => s.id)).toEqual([legacy[1]]);
      expect(paged).toMatchObject({ more: true });
      expect(paged).not.toHaveProperty("total");
      // A name no trigger has (or had): an empty list.
      expect(await list("project=cli_demo&trigger=nope")).toEqual({
        sessions: [],
        more: false,
        total: 0,
      });
      for (const [bad, detail] of [
        ["", "trigger: must not be empty"],
        ["t".repeat(64), "trigger: must be at most 63 characters"],
        [
          "a b",
          'trigger: must be a trigger name: letters, digits, "_" and "-", starting with a letter or "_"',
        ],
      ]) {
        const res = await api(`project=cli_demo&trigger=${encodeURIComponent(bad!)}`);
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(await res.json()).toMatchObject({ status: 400, detail });
      }

      const rows = await cli(["session", "list", "--project", "cli_demo", "--trigger", "legacy"]);
      expect(rows.exitCode).toBe(0);
      const lines = rows.stdout.split("\n");
      expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual(
        [...legacy].reverse().map((id) => [id, "cli_demo", "legacy"]),
      );
      expect(rows.stdout).not.toContain(hook);
      const one = await cli(["session", "list", "--trigger", "legacy", "--limit", "1"]);
      expect(one.stdout.split("\n").slice(1).join()).toContain(legacy[1]);
      expect(one.stderr).toBe(`showing the newest 1; older ones with --before ${legacy[1]}`);
      // The notice's option gives the next page: the older one.
      const older = await cli([
        "session",
        "list",
        "--trigger",
        "legacy",
        "--limit",
        "1",
        "--before",
        legacy[1]!,
      ]);
      expect(older.stdout.split("\n").slice(1).join()).toContain(legacy[0]);
      expect(older.stderr).toBe("");
      const none = await cli(["session", "list", "--project", "cli_demo", "--trigger", "nope"]);
      expect([none.exitCode, none.stdout, none.stderr]).toEqual([0, "no sessions", ""]);
      for (const [bad, detail] of [
        ["", "must not be empty"],
        ["t".repeat(64), "must be at most 63 characters"],
      ]) {
        const r = await cli(["session", "list", "--trigger", bad!]);
        expect([r.exitCode, r.stdout, r.stderr]).toEqual([1, "", `error: trigger: ${detail}`]);
      }
    });
  });

  describe("with cli-v2 deployed", () => {
    beforeEach(deployed("cli-v2"));

    it("refuses a bad manifest with file:line:path lines, exit 1, nothing changed", async () => {
      const before = (await cli(["trigger", "list"])).stdout;
      const r = await cli(["deploy", "--manifest", join(FIXTURES, "bad-manifest/manifest.yaml")]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain("manifest.yaml:7: triggers[0].is_sync: expected boolean");
      expect(r.stderr).toMatch(/manifest.yaml:8: triggers\[0\]\.call: /);
      expect((await cli(["trigger", "list"])).stdout).toBe(before);
    });

    it("stops a deploy whose Python does not compile, changing nothing", async () => {
      const before = (await cli(["trigger", "list"])).stdout;
      const r = await cli(["deploy", "--manifest", join(FIXTURES, "broken-build/manifest.yaml")]);
      expect(r.exitCode).toBe(1);
      // (a slow deploy may say "deploying…" first: the error is the last line)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^error: /);
      expect(r.stderr).toContain("handlers.py:5: SyntaxError");
      expect(r.stdout).toBe("");
      expect((await cli(["trigger", "list"])).stdout).toBe(before);
    });

    it("sets a secret from stdin, lists envs and vars without the value", async () => {
      const envs = await cli(["env", "list"]);
      const envId = /^(env_[0-9a-z]{26})\s+cli_demo\/default$/m.exec(envs.stdout)![1]!;
      const set = await cli(["var", "set", "--secret", "--env", envId, "TOKEN"], {
        input: "s3cret-from-stdin\n",
      });
      expect(set.exitCode).toBe(0);
      expect(set.stdout).not.toContain("s3cret");
      const list = await cli(["var", "list", "--env", "cli_demo"]);
      expect(list.stdout).toContain("TOKEN");
      expect(list.stdout).not.toContain("s3cret");
      // The handler gets the secret (without stdin's newline); its value is masked in the prints.
      const path = /\/webhooks\/[0-9a-z]{26}/.exec(
        (await cli(["trigger", "list"])).stdout.split("\n").find((l) => l.startsWith("hook "))!,
      )![0];
      const { session_id } = (await (await fetch(emu.url + path, { method: "POST" })).json()) as {
        session_id: string;
      };
      await emu.ended(session_id);
      const prints = await cli(["session", "prints", "cli_demo", "--no-timestamps"]);
      expect(prints.stdout).toBe("bonjour ********\nthe handler saw the real value");
      const stamped = await cli(["session", "prints", session_id]);
      expect(stamped.stdout).toMatch(/^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] bonjour \*{8}$/m);
      const log = await cli(["session", "log", session_id]);
      expect(log.stdout).toContain("completed");
      expect(log.stdout).not.toContain("s3cret");
      const sessions = await cli(["session", "list", "--project", "cli_demo"]);
      expect(sessions.stdout).toContain(session_id);
    });

    it("refuses a var of a connection the project does not have, with one line, changing nothing", async () => {
      const vars = () => cli(["var", "list", "--env", "cli_demo"]).then((r) => r.stdout);
      const before = await vars();
      // Not even read from stdin: the refusal comes first.
      for (const value of [["v"], []]) {
        const r = await cli(["var", "set", "--connection", "cli_demo/nope", "token", ...value], {
          input: "v\n",
        });
        expect([r.exitCode, r.stdout, r.stderr]).toEqual([
          1,
          "",
          'error: connection "nope" not found in project "cli_demo"',
        ]);
      }
      const project = await cli(["var", "set", "--connection", "no_such/gh", "token", "v"]);
      expect([project.exitCode, project.stderr]).toEqual([1, 'error: project "no_such" not found']);
      expect(await vars()).toBe(before);
      expect(before).not.toContain("nope__token");
    });

    it("watches a session live until it ends, and stops another", async () => {
      const path = /\/webhooks\/[0-9a-z]{26}/.exec(
        (await cli(["trigger", "list"])).stdout.split("\n").find((l) => l.startsWith("slow "))!,
      )![0];
      const start = async (seconds: string) =>
        (
          (await (await fetch(emu.url + path, { method: "POST", body: seconds })).json()) as {
            session_id: string;
          }
        ).session_id;
      const watched = await start("0.5");
      const watch = await cli(["session", "watch", watched]);
      expect(watch.exitCode).toBe(0);
      expect(watch.stdout).toMatch(/print: slow started[\s\S]*print: slow finished/);
      expect(watch.stdout.trim().split("\n").at(-1)).toBe(`session ${watched}: completed`);

      const stopped = await start("30");
      // Stopped while it runs, however long a slow machine takes to start it.
      await until("the session to start", async () =>
        (await emu.prints(stopped)).includes("slow started"),
      );
      const stop = await cli(["session", "stop", stopped]);
      expect(stop.exitCode).toBe(0);
      expect(stop.stdout).toBe(`session ${stopped}: stopped`);
      const list = await cli(["session", "list", "--project", "cli_demo", "--state", "stopped"]);
      expect(list.stdout).toContain(stopped);
    });
  });

  it("prints config where without a service, and one error line when things go wrong", async () => {
    const where = await cli(["config", "where"]);
    expect(where.exitCode).toBe(0);
    expect(where.stdout).toContain(join(emu.dataHome, "x", "hookline"));
    expect(where.stdout).toContain("XDG_DATA_HOME");
    const missing = await cli(["session", "log", "ses_00000000000000000000000000"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(/^error: /);
    const usage = await cli(["var", "set"]);
    expect(usage.exitCode).toBe(1);
    expect(usage.stderr).toContain("USAGE");
    const down = await execa("node", [join(repoRoot, "bin/cli.mjs"), "trigger", "list"], {
      env: { SVC_URL: "http://127.0.0.1:9" },
      reject: false,
    });
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toContain("cannot reach the service");
  });
});
