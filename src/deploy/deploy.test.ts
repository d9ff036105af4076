import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { beforeEach, describe, expect, it } from "vitest";
import { HooklineError } from "../errors.ts";
import { keyedLock } from "../locks.ts";
import type { BuildFiles } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { createSecretBox } from "../secrets.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { type DeployContext, DeployResultSchema, deploy, resultLines } from "./index.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const FILES = { "handlers.py": b64("def on_hook(event):\n    pass\n") };

const V1 = `version: v2
project:
  name: demo
vars:
  - name: GREETING
    value: hello
  - name: OLD
    value: goes away
  - name: TOKEN
    value: s3cret
    secret: true
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_hook
  - name: legacy
    type: webhook
    call: handlers.py:on_hook
`;

const V2 = `version: v2
project:
  name: demo
vars:
  - name: GREETING
    value: bonjour
  - name: TOKEN
    value: s3cret
    secret: true
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_hook
    filter: data.method == "POST"
  - name: added
    type: webhook
`;

let stores: Stores;
let ctx: DeployContext;
/** What the fake runtime's `check` does; a throw is a failed build. */
let check: (build: BuildFiles, calls: string[], onProgress: (line: string) => void) => void;
const changed: string[] = [];

beforeEach(() => {
  stores = createStores(createStorageFromUrl("memory:"));
  check = () => {};
  changed.length = 0;
  const runtime: Runtime = {
    check: async (build, calls, onProgress) => check(build, calls, onProgress ?? (() => {})),
    run: () => {
      throw new Error("a deploy runs no session");
    },
    dispose: async () => {},
  };
  ctx = {
    stores,
    runtime,
    secrets: createSecretBox(randomBytes(32)),
    locks: keyedLock(),
    changed: (id) => void changed.push(id),
  };
});

const run = (manifest: string, files: Record<string, string> = FILES) =>
  deploy(ctx, { manifest, manifest_file: "manifest.yaml", files });

/** Every key in storage with its value: "nothing changed" means this is deep-equal before and after. */
async function snapshot() {
  const keys = (await stores.storage.getKeys()).sort();
  return Object.fromEntries(
    await Promise.all(keys.map(async (k) => [k, await stores.storage.getItem(k)])),
  );
}

describe("deploy", () => {
  it("creates project, vars, triggers, build and deployment, and answers in the declared shape", async () => {
    check = (_build, calls, onProgress) => {
      expect(calls).toEqual(["handlers.py:on_hook", "handlers.py:on_hook"]);
      onProgress("creating the Python environment…");
    };
    const result = await run(V1);
    expect(v.parse(DeployResultSchema, result)).toEqual(result);
    expect(result.progress).toEqual(["creating the Python environment…"]);
    expect(result.plan.map((s) => `${s.kind} ${s.subject}: ${s.state}`)).toEqual([
      "project demo: not found, will create",
      "var demo/GREETING: not found, will set",
      "var demo/OLD: not found, will set",
      "var demo/TOKEN: not found, will set",
      "trigger demo:/hook: not found, will create",
      "trigger demo:/legacy: not found, will create",
    ]);
    const doc = (await stores.projects.byName("demo"))!;
    expect(result.project_id).toBe(doc.project.id);
    expect(result.exec.map((s) => `${s.op} ${s.id} ${s.result}`)).toEqual([
      `create_project ${doc.project.id} created`,
      `set_var ${doc.env.id} updated`,
      `set_var ${doc.env.id} updated`,
      `set_var ${doc.env.id} updated`,
      `create_trigger ${doc.triggers[0]!.id} created`,
      `create_trigger ${doc.triggers[1]!.id} created`,
      expect.stringMatching(/^create_build bld_[0-9a-z]{26} created$/),
      `create_deployment ${result.deployment_id} created`,
      `activate_deployment ${result.deployment_id} activated`,
    ]);
    expect(result.lines).toEqual(resultLines(result));
    expect(doc.project.active_deployment_id).toBe(result.deployment_id);
    expect((await stores.deployments.get(result.deployment_id))?.state).toBe("active");
    // The secret is sealed at rest, and opens to the manifest's value.
    const token = doc.vars.find((x) => x.name === "TOKEN")!;
    expect(token.value).not.toContain("s3cret");
    expect(ctx.secrets.open(token.value)).toBe("s3cret");
    for (const t of doc.triggers) {
      expect(await stores.webhooks.get(t.webhook_id)).toEqual({
        project_id: doc.project.id,
        trigger_id: t.id,
      });
    }
    expect(result.triggers).toEqual(
      doc.triggers.map((t) => ({
        id: t.id,
        name: t.name,
        webhook_id: t.webhook_id,
        webhook_path: `/webhooks/${t.webhook_id}`,
      })),
    );
    expect(changed).toEqual([doc.project.id]);
  });

  it("changes nothing when the build fails: a new project is not created", async () => {
    check = () => {
      throw new HooklineError("unprocessable", "handlers.py:1: SyntaxError");
    };
    await expect(run(V1)).rejects.toThrow("SyntaxError");
    expect(await snapshot()).toEqual({});
    expect(changed).toEqual([]);
  });

  it("changes nothing when the build of a redeploy fails", async () => {
    await run(V1);
    const before = await snapshot();
    changed.length = 0;
    check = () => {
      throw new HooklineError("unprocessable", "handlers.py:3: NameError");
    };
    await expect(run(V2)).rejects.toThrow("NameError");
    expect(await snapshot()).toEqual(before);
    expect(changed).toEqual([]);
  });

  it("refuses a call whose file is not uploaded, and a bad manifest, before looking at storage", async () => {
    await expect(run(V1, { "other.py": b64("") })).rejects.toMatchObject({
      code: "unprocessable",
      message: expect.stringContaining('file "handlers.py" is not in the build'),
    });
    await expect(run("version: v9\n")).rejects.toMatchObject({
      code: "unprocessable",
      extra: {
        issues: expect.arrayContaining([expect.objectContaining({ line: 1, path: "version" })]),
      },
    });
    expect(await snapshot()).toEqual({});
  });

  it("needs no changes for the same manifest, and still lists every trigger's webhook path", async () => {
    const first = await run(V1);
    const again = await run(V1);
    expect(again.plan.every((s) => s.action === "keep")).toBe(true);
    expect(again.exec.map((s) => s.op)).toEqual([
      "create_build",
      "create_deployment",
      "activate_deployment",
    ]);
    expect(again.triggers).toEqual(first.triggers);
    expect(again.lines.join("\n")).not.toContain("webhook path is");
    expect((await stores.deployments.get(first.deployment_id))?.state).toBe("inactive");
  });

  it("redeploys: updates, creates and deletes, keeping surviving triggers' ids and webhook ids", async () => {
    const first = await run(V1);
    const hook = first.triggers.find((t) => t.name === "hook")!;
    const legacy = first.triggers.find((t) => t.name === "legacy")!;
    const second = await run(V2);
    expect(second.plan.map((s) => `${s.subject}: ${s.action}`)).toEqual([
      "demo: keep",
      "demo/GREETING: update",
      "demo/TOKEN: keep",
      "demo/OLD: delete",
      "demo:/hook: update",
      "demo:/added: create",
      "demo:/legacy: delete",
    ]);
    expect(second.triggers.map((t) => t.name)).toEqual(["hook", "added"]);
    expect(second.triggers[0]).toEqual(hook);
    expect(second.exec).toContainEqual({
      op: "update_trigger",
      subject: "demo:/hook",
      id: hook.id,
      result: "updated",
    });
    expect(second.exec).toContainEqual({
      op: "delete_trigger",
      subject: "demo:/legacy",
      id: legacy.id,
      result: "deleted",
    });
    expect(second.exec).toContainEqual(
      expect.objectContaining({ op: "delete_var", subject: "demo/OLD" }),
    );

    const doc = (await stores.projects.byName("demo"))!;
    expect(doc.triggers.find((t) => t.name === "hook")?.filter).toBe('data.method == "POST"');
    expect(doc.vars.map((x) => [x.name, x.secret ? "(sealed)" : x.value])).toEqual([
      ["GREETING", "bonjour"],
      ["TOKEN", "(sealed)"],
    ]);
    expect(await stores.webhooks.get(legacy.webhook_id)).toBeNull();
    expect(await stores.webhooks.get(hook.webhook_id)).not.toBeNull();
    const added = second.triggers[1]!;
    expect(await stores.webhooks.get(added.webhook_id)).toEqual({
      project_id: doc.project.id,
      trigger_id: added.id,
    });
    expect((await stores.deployments.get(first.deployment_id))?.state).toBe("inactive");
    expect((await stores.deployments.get(second.deployment_id))?.state).toBe("active");
  });

  it("keeps vars set with cli var set across redeploys, even ones the manifest names", async () => {
    await run(V1);
    const doc = (await stores.projects.byName("demo"))!;
    const cli = {
      env_id: doc.env.id,
      secret: false,
      source: "cli" as const,
      updated_at: doc.project.updated_at,
    };
    await stores.projects.put({
      ...doc,
      vars: [
        ...doc.vars.filter((x) => x.name !== "GREETING"),
        { ...cli, name: "GREETING", value: "from the cli" },
        { ...cli, name: "EXTRA", value: "kept" },
      ],
    });
    const result = await run(V2);
    expect(result.plan).toContainEqual(
      expect.objectContaining({ subject: "demo/GREETING", action: "keep" }),
    );
    const vars = (await stores.projects.byName("demo"))!.vars;
    expect(vars.find((x) => x.name === "GREETING")).toMatchObject({
      value: "from the cli",
      source: "cli",
    });
    expect(vars.find((x) => x.name === "EXTRA")).toMatchObject({ value: "kept", source: "cli" });
    expect(vars.find((x) => x.name === "OLD")).toBeUndefined();
  });

  it("runs deploys of one project one at a time: two at once make one project", async () => {
    let inside = 0;
    let most = 0;
    check = () => {
      most = Math.max(most, ++inside);
    };
    const runtime = ctx.runtime;
    ctx.runtime = {
      ...runtime,
      check: async (...args) => {
        await runtime.check(...args);
        await new Promise((r) => setTimeout(r, 20));
        inside--;
      },
    };
    const [a, b] = await Promise.all([run(V1), run(V1)]);
    expect(most).toBe(1);
    expect(a.project_id).toBe(b.project_id);
    expect(await stores.projects.list()).toHaveLength(1);
    expect(b.plan[0]?.action).toBe("keep");
  });
});
