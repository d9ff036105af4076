import { describe, expect, it } from "vitest";
import { sessionRecord, T } from "../../test/support/records.ts";
import { systemClock } from "../clock.ts";
import type { EventRecord, ProjectDoc, TriggerRecord } from "../model/records.ts";
import { createIngest, type IngestRequest, planIngest } from "./ingest.ts";
import { childStart } from "./sdk-start.ts";
import { newSessionRecord, type StartInput } from "./session-record.ts";

const trigger = (name: string, over: Partial<TriggerRecord> = {}): TriggerRecord => ({
  id: `trg_${name}`,
  project_id: "prj_1",
  name,
  type: "webhook",
  webhook_id: `wh_${name}`,
  event_type: "",
  call: `handlers.py:${name}`,
  is_sync: false,
  is_durable: false,
  filter: "",
  created_at: T,
  updated_at: T,
  ...over,
});
const doc = {
  project: { id: "prj_1", name: "demo", active_deployment_id: "dep_1" },
  triggers: [
    trigger("gh_push", { type: "connection", connection: "gh", event_type: "push" }),
    trigger("gh_any", { type: "connection", connection: "gh", filter: "data.n > 1" }),
  ],
} as unknown as ProjectDoc;
const deployment = { id: "dep_1", buildId: "bld_1" };
const data = { n: 2 } as unknown as EventRecord["data"];

/** An ingest over parts that note what is asked of them, in order. */
function recorded(opts: { admit?: boolean } = {}) {
  const steps: string[] = [];
  const began: StartInput[] = [];
  const stored: EventRecord[] = [];
  const ingest = createIngest({
    clock: systemClock,
    admit: async (where, sync) => {
      steps.push(`admit ${where}${sync ? " sync" : ""}`);
      return (opts.admit ?? true) ? { ok: true } : { ok: false };
    },
    storeEvent: async (e) => {
      steps.push("store");
      stored.push(e);
    },
    publish: (source) => steps.push(`publish ${source}`),
    begin: async (input, where, storeEvent) => {
      steps.push(`begin ${where}${storeEvent ? " with its event" : ""}`);
      began.push(input);
      if (storeEvent) stored.push(input.event);
      return newSessionRecord(input, T);
    },
    outcome: async () => {
      steps.push("outcome");
      return { kind: "timeout" };
    },
  });
  return { ingest, steps, began, stored };
}

const webhook = (t: TriggerRecord, type = "post"): IngestRequest => ({
  source: { kind: "webhook", trigger: t },
  doc,
  deployment,
  event: { type, data, webhook_id: t.webhook_id },
});

describe("ingest", () => {
  it("takes an asynchronous webhook event in order: admit, its event stored with the session's record, publish", async () => {
    const r = recorded();
    const { event, session, outcome } = await r.ingest(webhook(trigger("on_post")));
    expect(r.steps).toEqual([
      "admit anywhere",
      "begin anywhere with its event",
      "publish prj_1:on_post",
    ]);
    expect(event).toMatchObject({
      trigger_name: "on_post",
      webhook_id: "wh_on_post",
      session_id: session?.id,
    });
    expect(r.stored[0]).toBe(event);
    expect(outcome).toBeNull();
  });

  it("runs a synchronous one here and hands back the outcome to wait for", async () => {
    const r = recorded();
    const { outcome } = await r.ingest(webhook(trigger("sync", { is_sync: true })));
    expect(r.steps).toEqual([
      "admit anywhere sync",
      "begin here with its event",
      "publish prj_1:sync",
    ]);
    expect(await outcome?.(1000)).toEqual({ kind: "timeout" });
  });

  it("refuses a webhook when full and stores nothing", async () => {
    const r = recorded({ admit: false });
    await expect(r.ingest(webhook(trigger("on_post")))).rejects.toMatchObject({
      code: "unavailable",
    });
    expect(r.steps).toEqual(["admit anywhere"]);
  });

  it("keeps a schedule's event when full, starting nothing", async () => {
    const r = recorded({ admit: false });
    const t = trigger("tick", { type: "schedule", webhook_id: "" });
    const res = await r.ingest({
      source: { kind: "schedule", trigger: t },
      doc,
      deployment,
      event: { type: "schedule", data, at: T },
    });
    expect(res).toMatchObject({ session: null, turnedAway: true, event: { created_at: T } });
    expect(r.steps).toEqual(["admit here", "store", "publish prj_1:tick"]);
  });

  it("lets a filter that fails start nothing, and tells a call-less trigger's subscribers only what passes", async () => {
    const r = recorded();
    const plain = await r.ingest(webhook(trigger("only_get", { event_type: "get" })));
    expect(plain.session).toBeNull();
    const quiet = trigger("src", { call: null, filter: "data.n > 5" });
    await r.ingest(webhook(quiet));
    expect(r.steps).toEqual(["store", "publish prj_1:only_get", "store"]);
  });

  it("sends a connection's event to its matching trigger and its subscribers", async () => {
    const r = recorded();
    const req: IngestRequest = {
      source: { kind: "connection", name: "gh" },
      doc,
      deployment,
      event: { type: "issues", data },
    };
    expect(planIngest(req).trigger?.name).toBe("gh_any");
    const { session } = await r.ingest(req);
    expect(session?.trigger_name).toBe("gh_any");
    expect(r.steps).toContain("publish prj_1:gh");
  });

  it("starts a re-run here from the stored event, telling nobody", async () => {
    const r = recorded();
    const stored = { id: "evt_old", event_type: "post", data } as EventRecord;
    const res = await r.ingest({
      source: { kind: "rerun", trigger: trigger("on_post") },
      doc,
      deployment,
      event: { stored },
    });
    expect(res.event).toBe(stored);
    expect(r.steps).toEqual(["admit here", "begin here"]);
  });

  it("makes a stored start event and an async child as durable as its parent", async () => {
    const r = recorded();
    const parent = sessionRecord({ id: "ses_p", durable: true, is_sync: true });
    const f = {
      loc: "jobs.py:run",
      data: { n: { $int: "9007199254740993" } },
      memo: { a: "b" },
      project: "",
    };
    await r.ingest(childStart(parent, doc, f, "2026-01-01T00:00:00.000Z"));
    const input = r.began[0]!;
    expect(input.trigger).toMatchObject({ call: "jobs.py:run", is_sync: false, is_durable: true });
    expect(input.event).toMatchObject({
      event_type: "start",
      sdk_data: f.data,
      session_id: input.sessionId,
    });
    expect(input).toMatchObject({ parentId: "ses_p", memo: { a: "b" }, buildId: parent.build_id });
    expect(r.stored[0]).toBe(input.event);
    expect(r.steps).toEqual(["admit here", "begin here with its event"]);
  });
});
