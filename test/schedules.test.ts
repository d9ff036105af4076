import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { EventRecord, ScheduleData, SessionRecord } from "../src/model/records.ts";
import { type EmulatorHandle, folderFiles, useEmulator } from "./support/emulator.ts";
import { repoRoot } from "./support/python.ts";

/**
 * Schedule triggers, connections, var values and skipped SDK requirements through the real
 * service and real Python, in AutoKitteh's spelling (autokitteh.yaml, v1 nested, `import
 * autokitteh`) and ours (manifest.yaml, v2 top-level).
 */
const AK = join(import.meta.dirname, "fixtures", "schedules-ak");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sessionsOf(emu: EmulatorHandle, project: string, trigger: string) {
  const { sessions } = await emu.api<{ sessions: SessionRecord[] }>(
    `/sessions?project=${project}&limit=1000`,
  );
  return sessions.filter((s) => s.trigger_name === trigger);
}

/** Polls until `project`'s `trigger` has started at least `n` sessions (a generous 20 s). */
async function waitSessions(emu: EmulatorHandle, project: string, trigger: string, n: number) {
  for (let i = 0; i < 200; i++) {
    const found = await sessionsOf(emu, project, trigger);
    if (found.length >= n) return found;
    await sleep(100);
  }
  throw new Error(`${project}/${trigger}: fewer than ${n} sessions after 20 s`);
}

function deployText(emu: EmulatorHandle, manifest: string, files: Record<string, string>) {
  return emu.api<{ lines: string[]; project_id: string }>("/deploy", {
    method: "POST",
    body: JSON.stringify({ manifest, manifest_file: "manifest.yaml", files }),
  });
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("schedules, connections and vars through the real service", () => {
  const emu = useEmulator();
  const cli = (args: string[]) =>
    execa("node", [join(repoRoot, "bin/cli.mjs"), ...args], {
      env: { SVC_URL: emu.url, XDG_DATA_HOME: join(emu.dataHome, "x"), SVC_API_TOKEN: "" },
      reject: false,
    });

  it("AutoKitteh's spelling: the deploy says what it leaves out, the schedule fires each second", async () => {
    const r = await cli(["deploy", "--manifest", join(AK, "autokitteh.yaml")]);
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split("\n");
    // The notes come right after the plan's steps; the steps' own lines are unchanged.
    expect(lines.slice(0, 10)).toEqual([
      '[plan] project "ak_sched": not found, will create',
      '[plan] connection "ak_sched/my_slack": not found, will create',
      '[plan] var "ak_sched/COUNT": not found, will set',
      '[plan] var "ak_sched/ENABLED": not found, will set',
      '[plan] var "ak_sched/EMPTY": not found, will set',
      '[plan] trigger "ak_sched:/tick": not found, will create',
      '[plan] trigger "ak_sched:/slack_message": not found, will create',
      '[plan] trigger "ak_sched:/ping": not found, will create',
      '[plan] requirement "autokitteh==0.19.2": skipped: the service provides workflow_sdk, importable as autokitteh',
      '[plan] requirement "workflow_sdk[extra] >= 0.1 ; python_version >= "3.11"": skipped: the service provides workflow_sdk, importable as autokitteh',
    ]);
    // A Slack connection receives events: the deploy says where Slack posts, and what it needs.
    expect(lines.filter((l) => l.includes('connection "my_slack"'))).toEqual([
      expect.stringMatching(
        /^\[exec\] connection "my_slack": inbound path is "\/inbound\/[0-9a-z]{26}" \(needs authorization, private_signing_secret or signing_secret\), URL http:\/\/127\.0\.0\.1:\d+\/inbound\/[0-9a-z]{26}$/,
      ),
    ]);
    // Only the webhook gets a path.
    expect(lines.filter((l) => l.includes("webhook path is"))).toEqual([
      expect.stringMatching(
        /^\[exec\] trigger "ping" created, webhook path is "\/webhooks\/[0-9a-z]{26}", URL http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}$/,
      ),
    ]);

    const ticks = await waitSessions(emu, "ak_sched", "tick", 2);
    const first = await emu.ended(ticks.at(-1)!.id);
    expect(first.state).toBe("completed");
    const prints = await emu.prints(first.id);
    const m = /^due=(\S+) fired=(\S+) missed=0 type=schedule$/.exec(prints[0]!)!;
    expect(m).not.toBeNull();
    const [due, fired] = [Date.parse(m[1]!), Date.parse(m[2]!)];
    expect(due % 1000).toBe(0); // @every slots fall on whole seconds
    expect(fired).toBeGreaterThanOrEqual(due);
    expect(prints[1]).toBe(`stamped ${m[1]}`);
    const { event } = await emu.api<{ event: EventRecord }>(`/events/${first.event_id}`);
    expect(event.event_type).toBe("schedule");
    expect(event.data as ScheduleData).toMatchObject({ schedule: "@every 1s", timezone: "UTC" });

    // `cli trigger list`: the next firing, and the Slack connection's trigger. Its next firing is
    // a current slot (a firing under way may still show): no older than 2 s before the command
    // was sent, however long the command takes.
    const sent = Date.now();
    const list = (await cli(["trigger", "list", "--project", "ak_sched"])).stdout.split("\n");
    expect(list[0]).toMatch(/NEXT_FIRE/);
    const tick = list.find((l) => l.startsWith("tick "))!;
    const next = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z/.exec(tick)![0];
    expect(Date.parse(next)).toBeGreaterThan(sent - 2000);
    expect(list.find((l) => l.startsWith("slack_message "))).toMatch(
      / connection, durable +message /,
    );
    const { triggers } = await emu.api<{ triggers: Array<Record<string, unknown>> }>(
      "/triggers?project=ak_sched",
    );
    expect(triggers.find((t) => t.name === "slack_message")).toMatchObject({
      type: "connection",
      active: true,
      webhook_path: "",
      next_fire: null,
    });
    expect(await sessionsOf(emu, "ak_sched", "slack_message")).toEqual([]);
  });

  it("AutoKitteh's spelling: value: 120, true and empty reach Python as their text", async () => {
    const { triggers } = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=ak_sched",
    );
    const ping = triggers.find((t) => t.name === "ping")!;
    const res = await fetch(emu.url + ping.webhook_path, { method: "POST" });
    const { session_id } = (await res.json()) as { session_id: string };
    expect((await emu.ended(session_id)).state).toBe("completed");
    expect(await emu.prints(session_id)).toEqual(["vars='120','true',''"]);
  });

  it("a redeploy that removes a schedule stops it at once", async () => {
    const files = folderFiles(AK);
    delete files["autokitteh.yaml"];
    const manifest = readFileSync(join(AK, "autokitteh.yaml"), "utf8").replace(
      / {4}- name: tick\n.*\n.*\n/,
      "",
    );
    expect(manifest).not.toContain("tick");
    const r = await deployText(emu, manifest, files);
    expect(r.lines).toContain('[plan] trigger "ak_sched:/tick": found, will delete');
    await sleep(300); // a firing already under way may still land
    const before = (await sessionsOf(emu, "ak_sched", "tick")).length;
    await sleep(2500);
    expect((await sessionsOf(emu, "ak_sched", "tick")).length).toBe(before);
  });

  it("ours: manifest.yaml v2 with a timezone; changing the schedule takes effect at once", async () => {
    const code = "def on_tick(event):\n    print(event.data['timezone'], event.data['schedule'])\n";
    const manifest = (schedule: string) =>
      [
        "version: v2",
        "project:",
        "  name: our_sched",
        "triggers:",
        "  - name: tick",
        `    schedule: "${schedule}"`,
        "    timezone: Asia/Kolkata",
        "    call: handlers.py:on_tick",
        "",
      ].join("\n");
    const r = await deployText(emu, manifest("@every 1s"), { "handlers.py": b64(code) });
    expect(r.lines).not.toContainEqual(expect.stringContaining("webhook path"));
    const ticks = await waitSessions(emu, "our_sched", "tick", 1);
    await emu.ended(ticks[0]!.id);
    expect(await emu.prints(ticks[0]!.id)).toEqual(["Asia/Kolkata @every 1s"]);

    // Half past midnight in Kolkata is 19:00 UTC the day before.
    const changed = await deployText(emu, manifest("30 0 * * *"), { "handlers.py": b64(code) });
    expect(changed.lines).toContain('[plan] trigger "our_sched:/tick": found, will update');
    await sleep(300);
    const before = (await sessionsOf(emu, "our_sched", "tick")).length;
    await sleep(2500);
    expect((await sessionsOf(emu, "our_sched", "tick")).length).toBe(before);
    const { triggers } = await emu.api<{ triggers: { next_fire: string }[] }>(
      "/triggers?project=our_sched",
    );
    expect(triggers[0]!.next_fire).toMatch(/T19:00:00\.000Z$/);
  });

  it("ours: a pinned workflow_sdk requirement and a v2 connection deploy with notes", async () => {
    const manifest = [
      "version: v2",
      "project: {name: our_conn}",
      "connections:",
      "  - {name: lin, integration: linear}",
      "vars:",
      "  - {name: RETRIES, value: 3}",
      "triggers:",
      "  - {name: on_push, connection: lin, event_type: issue_created, call: handlers.py:on_push}",
      "  - {name: hook, type: webhook, is_sync: true, call: handlers.py:on_hook}",
      "",
    ].join("\n");
    const code = [
      "import os",
      "import workflow_sdk",
      "",
      "def on_push(event):",
      '    print("must not run")',
      "",
      "def on_hook(event):",
      '    workflow_sdk.http_outcome(200, body=os.environ["RETRIES"])',
      "",
    ].join("\n");
    // A version no index has: pip would fail the deploy if this line reached it.
    const requirements = "workflow_sdk==99.0.0\n";
    const r = await deployText(emu, manifest, {
      "handlers.py": b64(code),
      "requirements.txt": b64(requirements),
    });
    expect(r.lines).toContain(
      '[plan] requirement "workflow_sdk==99.0.0": skipped: the service provides workflow_sdk, importable as autokitteh',
    );
    expect(r.lines).toContain(
      '[plan] connection "our_conn/lin": integration "linear" delivers no events here yet (github, slack, http, jira, confluence, telegram, googlecalendar, googledrive, gmail, googleforms and discord do); its triggers will not fire ("on_push", stored inactive)',
    );
    const { triggers } = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=our_conn",
    );
    const res = await fetch(emu.url + triggers.find((t) => t.name === "hook")!.webhook_path, {
      method: "POST",
    });
    expect(await res.text()).toBe("3");
    expect(await sessionsOf(emu, "our_conn", "on_push")).toEqual([]);
  });

  it("a schedule without call feeds its subscribers", async () => {
    const code = [
      "import autokitteh",
      "",
      "def on_hook(event):",
      '    sub = autokitteh.subscribe("tick")',
      "    e = autokitteh.next_event(sub, timeout=10)",
      '    autokitteh.http_outcome(200, json={"due": e.data.due, "schedule": e.data["schedule"]})',
      "",
    ].join("\n");
    const manifest = [
      "version: v1",
      "project:",
      "  name: sub_sched",
      "  triggers:",
      '    - {name: tick, schedule: "@every 1s"}',
      "    - {name: hook, webhook: {}, is_sync: true, call: handlers.py:on_hook}",
      "",
    ].join("\n");
    await deployText(emu, manifest, { "handlers.py": b64(code) });
    const { triggers } = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
      "/triggers?project=sub_sched",
    );
    const hook = triggers.find((t) => t.name === "hook")!;
    const res = await fetch(emu.url + hook.webhook_path, { method: "POST" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { due: string; schedule: string };
    expect(body.schedule).toBe("@every 1s");
    expect(Date.parse(body.due) % 1000).toBe(0);
    expect(await sessionsOf(emu, "sub_sched", "tick")).toEqual([]); // no call: no session
  });

  it("refuses a bad schedule or timezone with the line, and changes nothing", async () => {
    const bad =
      "version: v2\nproject: {name: bad_sched}\ntriggers:\n  - name: t\n    schedule: '@every 1x'\n";
    const res = await fetch(`${emu.url}/api/v1/deploy`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ manifest: bad, files: {} }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: string }).detail).toContain(
      'manifest.yaml:5: triggers[0].schedule: "@every 1x": @every takes a duration',
    );
    const projects = await emu.api<{ projects: { name: string }[] }>("/projects");
    expect(projects.projects.map((p) => p.name)).not.toContain("bad_sched");
  });
});
