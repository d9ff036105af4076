import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { keyedLock } from "../locks.ts";
import type { BuildFiles } from "../model/records.ts";
import { withoutOwnSdk } from "../runtime/python/pip.ts";
import { createSecretBox } from "../secrets.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { type DeployContext, deploy, resultLines } from "./index.ts";

/** Schedule and connection triggers, and the plan notes, through deploy with a fake runtime. */
const b64 = (text: string) => Buffer.from(text).toString("base64");
const decode = (text: string) => Buffer.from(text, "base64").toString("utf8");
const FILES = { "h.py": b64("def f(event):\n    pass\n") };

let stores: Stores;
let ctx: DeployContext;
let checked: BuildFiles[];

beforeEach(() => {
  stores = createStores(createStorageFromUrl("memory:"));
  checked = [];
  ctx = {
    stores,
    runtime: {
      check: async (build) => void checked.push(build),
      run: () => {
        throw new Error("a deploy runs no session");
      },
      dispose: async () => {},
    },
    secrets: createSecretBox(randomBytes(32)),
    locks: keyedLock(),
    changed: () => {},
  };
});

const manifest = (trigger: string) =>
  `version: v2\nproject: {name: demo}\ntriggers:\n  - {name: t, call: h.py:f, ${trigger}}\n`;
const run = (text: string, files: Record<string, string> = FILES) =>
  deploy(ctx, { manifest: text, manifest_file: "manifest.yaml", files });

describe("deploy: trigger kinds", () => {
  it("gives a webhook id only to webhooks, across a change of kind", async () => {
    const first = await run(manifest("type: webhook"));
    const hookId = first.triggers[0]!.webhook_id;
    expect(await stores.webhooks.get(hookId)).not.toBeNull();

    const second = await run(manifest('schedule: "@every 15m", timezone: Europe/Paris'));
    expect(second.plan.at(-1)).toMatchObject({ subject: "demo:/t", action: "update" });
    expect(second.triggers[0]).toMatchObject({
      id: first.triggers[0]!.id,
      webhook_id: "",
      webhook_path: "",
    });
    expect(await stores.webhooks.get(hookId)).toBeNull();
    const doc = (await stores.projects.byName("demo"))!;
    expect(doc.triggers[0]).toMatchObject({
      type: "schedule",
      schedule: "@every 15m",
      timezone: "Europe/Paris",
      webhook_id: "",
    });
    expect(second.lines.join("\n")).not.toContain("webhook path is");

    // The same schedule again: nothing to do. A new zone: an update.
    const same = await run(manifest('schedule: "@every 15m", timezone: Europe/Paris'));
    expect(same.plan.at(-1)?.action).toBe("keep");
    const zone = await run(manifest('schedule: "@every 15m"'));
    expect(zone.plan.at(-1)?.action).toBe("update");

    const back = await run(manifest("webhook: {}"));
    const newId = back.triggers[0]!.webhook_id;
    expect(newId).toMatch(/^[0-9a-z]{26}$/);
    expect(newId).not.toBe(hookId);
    expect(await stores.webhooks.get(newId)).toMatchObject({ trigger_id: first.triggers[0]!.id });
    expect(back.lines).toContain(
      `[exec] trigger "t" created, webhook path is "/webhooks/${newId}"`,
    );
  });

  it("stores triggers of integrations without events inactive, and notes each connection once", async () => {
    const text = [
      "version: v1",
      "project:",
      "  name: demo",
      "  connections:",
      "    - {name: conf, integration: asana}",
      "    - {name: unused, integration: linear}",
      "    - {name: gh, integration: github}",
      "  triggers:",
      "    - {name: a, connection: conf, event_type: message_created, call: h.py:f}",
      "    - {name: b, connection: conf, event_type: message_updated, call: h.py:f}",
      "    - {name: c, connection: gh, event_type: push, call: h.py:f}",
      "",
    ].join("\n");
    const r = await run(text);
    expect(r.notes).toEqual([
      {
        kind: "connection",
        subject: "demo/conf",
        text: 'integration "asana" delivers no events here yet (github, slack, http, jira, confluence, telegram, googlecalendar, googledrive, gmail, googleforms and discord do); its triggers will not fire ("a", "b", stored inactive)',
      },
      {
        kind: "connection",
        subject: "demo/unused",
        text: 'integration "linear" delivers no events here yet (github, slack, http, jira, confluence, telegram, googlecalendar, googledrive, gmail, googleforms and discord do); it has no triggers',
      },
    ]);
    const doc = (await stores.projects.byName("demo"))!;
    expect(doc.triggers.map((t) => [t.type, t.connection, t.event_type, t.webhook_id])).toEqual([
      ["connection", "conf", "message_created", ""],
      ["connection", "conf", "message_updated", ""],
      ["connection", "gh", "push", ""],
    ]);
    expect(doc.connections!.map((c) => [c.name, c.integration, Boolean(c.inbound_id)])).toEqual([
      ["conf", "asana", false],
      ["unused", "linear", false],
      ["gh", "github", true],
    ]);
    // Only the event source has an inbound ref, and it names no trigger.
    const keys = await stores.storage.getKeys("webhooks");
    expect(keys).toEqual([`webhooks:${doc.connections![2]!.inbound_id}`]);
  });

  it("keeps a connection's id and inbound path across redeploys, and says where and what it needs", async () => {
    const text = (integration: string, vars = "") =>
      [
        "version: v2",
        "project: {name: demo}",
        "connections:",
        `  - {name: gh, integration: ${integration}${vars}}`,
        "",
      ].join("\n");
    const first = await run(text("github"));
    const gh = first.connections[0]!;
    expect(gh).toMatchObject({
      id: expect.stringMatching(/^con_[0-9a-z]{26}$/),
      name: "gh",
      integration: "github",
      inbound_path: expect.stringMatching(/^\/inbound\/[0-9a-z]{26}$/),
      status: { state: "needs", needs: ["pat_secret or webhook_secret", "pat or install_id"] },
    });
    expect(first.lines).toContain('[plan] connection "demo/gh": not found, will create');
    expect(first.lines).toContain(`[exec] create_connection "demo/gh": ${gh.id} created`);
    expect(first.lines).toContain(
      `[exec] connection "gh": inbound path is "${gh.inbound_path}" (needs pat_secret or webhook_secret, pat or install_id)`,
    );
    const withVars =
      ", vars: [{name: pat, value: ghp_1, secret: true}, {name: webhook_secret, value: s}]";
    const second = await run(text("github", withVars));
    expect(second.plan[1]).toMatchObject({ subject: "demo/gh", action: "keep" });
    expect(second.connections[0]).toMatchObject({
      id: gh.id,
      inbound_path: gh.inbound_path,
      status: { state: "ready", needs: [] },
    });
    expect(second.lines).toContain(
      `[exec] connection "gh": inbound path is "${gh.inbound_path}" (ready)`,
    );
    const doc = (await stores.projects.byName("demo"))!;
    // The secret is sealed at rest; the plain var is kept as given.
    expect(doc.vars.map((x) => [x.name, x.secret, x.value])).toEqual([
      ["gh__pat", true, expect.not.stringContaining("ghp_1")],
      ["gh__webhook_secret", false, "s"],
    ]);
    const id = gh.inbound_path.split("/").at(-1)!;
    expect(await stores.webhooks.get(id)).toEqual({
      project_id: doc.project.id,
      trigger_id: "",
      connection: "gh",
    });
    // Another event source keeps the path; leaving the manifest gives it up.
    const slack = await run(text("slack"));
    expect(slack.connections[0]).toMatchObject({ id: gh.id, inbound_path: gh.inbound_path });
    expect(slack.plan[1]).toMatchObject({ action: "update" });
    const gone = await run("version: v2\nproject: {name: demo}\n");
    expect(gone.connections).toEqual([]);
    expect(gone.lines).toContain(`[exec] delete_connection "demo/gh": ${gh.id} deleted`);
    expect(await stores.webhooks.get(id)).toBeNull();
  });
});

describe("deploy: requirements naming the SDK", () => {
  it("says it leaves them out (pip never gets them: installRequirements), and stores the file as given", async () => {
    const req =
      "requests==2.32\nAutoKitteh[all] >= 0.5 ; python_version >= '3.11'\nworkflow-sdk\n# c\n";
    const r = await run(manifest("type: webhook"), { ...FILES, "requirements.txt": b64(req) });
    expect(decode(checked[0]!.files["requirements.txt"]!)).toBe(req);
    expect(r.notes.map((n) => `${n.kind} ${n.subject}`)).toEqual([
      "requirement AutoKitteh[all] >= 0.5 ; python_version >= '3.11'",
      "requirement workflow-sdk",
    ]);
    const lines = resultLines(r);
    const at = lines.indexOf(
      `[plan] requirement "workflow-sdk": skipped: the service provides workflow_sdk, importable as autokitteh`,
    );
    expect(at).toBe(r.plan.length + 1); // after the plan's steps, before the exec lines
    const build = await stores.builds.get(r.exec.find((s) => s.op === "create_build")!.id);
    expect(decode(build!.files["requirements.txt"]!)).toBe(req);
  });

  it("knows the names however they are spelled", () => {
    expect(
      withoutOwnSdk(
        "autokitteh\nAUTOKITTEH==1\nworkflow_sdk\nworkflow.sdk>=1\nautokitteh-extra\n# autokitteh\n",
      ),
    ).toEqual({
      text: "autokitteh-extra\n# autokitteh\n",
      skipped: ["autokitteh", "AUTOKITTEH==1", "workflow_sdk", "workflow.sdk>=1"],
    });
  });
});
