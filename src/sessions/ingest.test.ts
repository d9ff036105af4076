import { describe, expect, it } from "vitest";
import { sessionRecord, T, triggerRecord } from "../../test/support/records.ts";
import { systemClock } from "../clock.ts";
import type { EventRecord, ProjectDoc, TriggerRecord } from "../model/records.ts";
import { createIngest, type IngestRequest } from "./ingest.ts";
import { childStart } from "./sdk-start.ts";
import { newSessionRecord, type StartInput } from "./session-record.ts";

const trigger = triggerRecord;
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

  it("starts a session of each connection trigger that takes the event, each with its own event; only the first is published", async () => {
    const r = recorded();
    const delivery = r.ingest.prepare({
      source: { kind: "connection", name: "gh" },
      doc,
      deployment,
      events: [{ type: "push", data, webhook_id: "in_gh" }],
    });
    const done = await delivery.run();
    expect(done.map((d) => d.session?.trigger_name)).toEqual(["gh_push", "gh_any"]);
    expect(done[0]!.event.id).toBe(delivery.eventId);
    expect(done[0]!.session?.id).toBe(delivery.sessionId);
    expect(new Set(done.map((d) => d.event.id)).size).toBe(2);
    expect(done.map((d) => d.event)).toMatchObject([
      { connection: "gh", trigger_name: "gh_push", webhook_id: "in_gh" },
      { connection: "gh", trigger_name: "gh_any", webhook_id: "in_gh" },
    ]);
    expect(r.steps).toEqual([
      "admit anywhere",
      "begin anywhere with its event",
      "publish prj_1:gh",
      "admit anywhere",
      "begin anywhere with its event",
    ]);
  });

  it("stores and publishes a connection's event that no trigger takes, in the delivery's order", async () => {
    const r = recorded();
    const none = { n: 0 } as unknown as EventRecord["data"];
    const done = await r.ingest
      .prepare({
        source: { kind: "connection", name: "gh" },
        doc,
        deployment,
        events: [
          { type: "issues", data: none },
          { type: "issues", data },
        ],
      })
      .run();
    expect(done.map((d) => [d.event.trigger_name, d.session?.trigger_name ?? null])).toEqual([
      ["gh", null],
      ["gh_any", "gh_any"],
    ]);
    expect(r.steps).toEqual([
      "store",
      "publish prj_1:gh",
      "admit anywhere",
      "begin anywhere with its event",
      "publish prj_1:gh",
    ]);
  });

  it("refuses a connection's delivery at the first session that may not start", async () => {
    const r = recorded({ admit: false });
    const delivery = r.ingest.prepare({
      source: { kind: "connection", name: "gh" },
      doc,
      deployment,
      events: [{ type: "push", data }],
    });
    await expect(delivery.run()).rejects.toMatchObject({ code: "unavailable" });
    expect(r.steps).toEqual(["admit anywhere"]);
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
