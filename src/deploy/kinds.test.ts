import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { keyedLock } from "../locks.ts";
import type { BuildFiles } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores, type Stores } from "../storage/stores.ts";
import { type DeployContext, deploy, resultLines } from "./index.ts";
import { withoutOwnSdk } from "./notes.ts";

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

  it("stores connection triggers inactive and notes each connection once", async () => {
    const text = [
      "version: v1",
      "project:",
      "  name: demo",
      "  connections:",
      "    - {name: slack, integration: slack}",
      "    - {name: unused, integration: github}",
      "  triggers:",
      "    - {name: a, connection: slack, event_type: message, call: h.py:f}",
      "    - {name: b, connection: slack, event_type: reaction_added, call: h.py:f}",
      "",
    ].join("\n");
    const r = await run(text);
    expect(r.notes).toEqual([
      {
        kind: "connection",
        subject: "demo/slack",
        text: 'connections are not supported by this service yet; its triggers will not fire ("a", "b", stored inactive)',
      },
      {
        kind: "connection",
        subject: "demo/unused",
        text: "connections are not supported by this service yet; it has no triggers",
      },
    ]);
    const doc = (await stores.projects.byName("demo"))!;
    expect(doc.triggers.map((t) => [t.type, t.connection, t.event_type, t.webhook_id])).toEqual([
      ["connection", "slack", "message", ""],
      ["connection", "slack", "reaction_added", ""],
    ]);
    expect(await stores.storage.getKeys("webhooks")).toEqual([]);
  });
});

describe("deploy: requirements naming the SDK", () => {
  it("leaves them out of what pip installs, with a note each, and stores the file as given", async () => {
    const req =
      "requests==2.32\nAutoKitteh[all] >= 0.5 ; python_version >= '3.11'\nworkflow-sdk\n# c\n";
    const r = await run(manifest("type: webhook"), { ...FILES, "requirements.txt": b64(req) });
    expect(decode(checked[0]!.files["requirements.txt"]!)).toBe("requests==2.32\n# c\n");
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
