import { describe, expect, it } from "vitest";
import { T } from "../../test/support/records.ts";
import type { ProjectDoc, TriggerRecord, VarRecord } from "../model/records.ts";
import { parseManifest } from "./index.ts";
import { type Change, planDeploy } from "./plan.ts";

const manifest = (body: string) =>
  parseManifest(`version: v2\nproject:\n  name: demo\n${body}`, "manifest.yaml");

const V1 = manifest(`vars:
  - name: GREETING
    value: hello
  - name: TOKEN
    value: s3cret
    secret: true
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_hook
  - name: source
    type: webhook
`);

/** Plain text "sealed" as `sealed:<text>`, so a test sees which values went through the box. */
const open = (sealed: string) => sealed.replace(/^sealed:/, "");

function variable(name: string, value: string, over: Partial<VarRecord> = {}): VarRecord {
  return {
    env_id: "env_1",
    name,
    value,
    secret: false,
    source: "manifest",
    updated_at: T,
    ...over,
  };
}

function trigger(name: string, over: Partial<TriggerRecord> = {}): TriggerRecord {
  return {
    id: `trg_${name}`,
    project_id: "prj_1",
    name,
    type: "webhook",
    webhook_id: `wh_${name}`,
    event_type: "",
    call: null,
    is_sync: false,
    is_durable: false,
    pickle_values: true, // these manifests are version: v2
    filter: "",
    created_at: T,
    updated_at: T,
    ...over,
  };
}

/** The project as V1 left it. */
function deployedV1(): ProjectDoc {
  return {
    project: {
      id: "prj_1",
      name: "demo",
      env_id: "env_1",
      active_deployment_id: "dep_1",
      created_at: T,
      updated_at: T,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T },
    vars: [variable("GREETING", "hello"), variable("TOKEN", "sealed:s3cret", { secret: true })],
    triggers: [
      trigger("hook", { event_type: "post", call: "handlers.py:on_hook" }),
      trigger("source"),
    ],
  };
}

/** The changes without the records they carry: what they say, in order. */
const summary = (changes: Change[]) =>
  changes.map((c) =>
    c.kind === "project" ? `project ${c.action}` : `${c.kind} ${c.name} ${c.action}`,
  );

describe("planDeploy", () => {
  it("creates everything for a new project, in manifest order: project, vars, triggers", () => {
    const changes = planDeploy(null, V1, open);
    expect(summary(changes)).toEqual([
      "project create",
      "var GREETING create",
      "var TOKEN create",
      "trigger hook create",
      "trigger source create",
    ]);
    const hook = changes.find((c) => c.kind === "trigger" && c.name === "hook");
    expect(hook).toMatchObject({ spec: { call: "handlers.py:on_hook" }, existing: undefined });
  });

  it("needs no change for the same manifest, comparing secrets by their opened value", () => {
    expect(summary(planDeploy(deployedV1(), V1, open))).toEqual([
      "project keep",
      "var GREETING keep",
      "var TOKEN keep",
      "trigger hook keep",
      "trigger source keep",
    ]);
  });

  it("updates what changed, creates what is new, deletes what left; deletions come last", () => {
    const next = manifest(`vars:
  - name: GREETING
    value: bonjour
  - name: ADDED
    value: "1"
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_hook
    filter: data.method == "POST"
  - name: fresh
    type: webhook
`);
    const changes = planDeploy(deployedV1(), next, open);
    expect(summary(changes)).toEqual([
      "project keep",
      "var GREETING update",
      "var ADDED create",
      "var TOKEN delete",
      "trigger hook update",
      "trigger fresh create",
      "trigger source delete",
    ]);
    const deleted = changes.find((c) => c.kind === "trigger" && c.action === "delete");
    expect(deleted).toMatchObject({ existing: { id: "trg_source", webhook_id: "wh_source" } });
    const updated = changes.find((c) => c.kind === "trigger" && c.action === "update");
    expect(updated).toMatchObject({
      existing: { id: "trg_hook" },
      spec: { filter: 'data.method == "POST"' },
    });
  });

  it("updates a var whose secrecy changed even when its value did not", () => {
    const doc = deployedV1();
    doc.vars[1] = variable("TOKEN", "s3cret");
    expect(summary(planDeploy(doc, V1, open))).toContain("var TOKEN update");
  });

  it("keeps vars set with cli var set: one the manifest names keeps its value, others stay", () => {
    const doc = deployedV1();
    doc.vars[0] = variable("GREETING", "from the cli", { source: "cli" });
    doc.vars.push(variable("CLI_ONLY", "x", { source: "cli" }));
    const changes = summary(planDeploy(doc, V1, open));
    expect(changes).toContain("var GREETING keep");
    expect(changes.some((c) => c.includes("CLI_ONLY"))).toBe(false);
  });

  it("updates a trigger when any of its settings changes", () => {
    const hookWith = (lines: string) =>
      manifest(`triggers:
  - name: hook
    type: webhook
${lines}
  - name: source
    type: webhook
`);
    const variants = [
      "    event_type: get\n    call: handlers.py:on_hook",
      "    event_type: post\n    call: handlers.py:other",
      "    event_type: post\n    call: handlers.py:on_hook\n    is_durable: true",
      "    event_type: post\n    call: handlers.py:on_hook\n    is_sync: true",
      "    event_type: post\n    call: handlers.py:on_hook\n    filter: 'true'",
      "    event_type: post",
    ];
    const doc = { ...deployedV1(), vars: [] };
    expect(summary(planDeploy(doc, hookWith(variants[0]!.replace("get", "post")), open))).toContain(
      "trigger hook keep",
    );
    for (const lines of variants) {
      expect(summary(planDeploy(doc, hookWith(lines), open)), lines).toContain(
        "trigger hook update",
      );
    }
  });

  it("updates every trigger when the manifest's version changes its pickling rule", () => {
    const doc = { ...deployedV1(), vars: [] };
    const asV1 = parseManifest(
      "version: v1\nproject:\n  name: demo\n  triggers:\n    - name: hook\n      type: webhook\n      event_type: post\n      call: handlers.py:on_hook\n      is_durable: false\n",
      "autokitteh.yaml",
    );
    expect(summary(planDeploy(doc, asV1, open))).toContain("trigger hook update");
    const v1Doc = {
      ...doc,
      triggers: doc.triggers.map((t) => ({ ...t, pickle_values: undefined })),
    };
    expect(summary(planDeploy(v1Doc, asV1, open))).toContain("trigger hook keep");
  });

  it("updates the project when its display_name changes, and a var when its description does", () => {
    const described = manifest(`  display_name: The Demo
vars:
  - name: GREETING
    description: what the bot says first
    value: hello
  - name: TOKEN
    value: s3cret
    secret: true
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_hook
  - name: source
    type: webhook
`);
    expect(summary(planDeploy(deployedV1(), described, open)).slice(0, 3)).toEqual([
      "project update",
      "var GREETING update",
      "var TOKEN keep",
    ]);
    const doc = deployedV1();
    doc.project.display_name = "The Demo";
    doc.vars[0] = variable("GREETING", "hello", { description: "what the bot says first" });
    expect(summary(planDeploy(doc, described, open)).slice(0, 2)).toEqual([
      "project keep",
      "var GREETING keep",
    ]);
    // A value set with cli var set still counts as the same only with the same description.
    doc.vars[0] = variable("GREETING", "from the cli", { source: "cli" });
    expect(summary(planDeploy(doc, described, open))).toContain("var GREETING update");
  });
});
