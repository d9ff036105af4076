import { describe, expect, it } from "vitest";
import { triggerRecord } from "../../test/support/records.ts";
import type { ProjectDoc, TriggerRecord } from "../model/records.ts";
import { planDelivery, takes } from "./plan.ts";

const trigger = (over: Partial<TriggerRecord> = {}) =>
  triggerRecord(over.name ?? "t", { type: "connection", webhook_id: "", ...over });

describe("takes: the one rule for whether a trigger takes an event", () => {
  it("takes every type with an empty or * event_type, else the same type", () => {
    expect(takes(trigger(), "push", {}, "github")).toBe(true);
    expect(takes(trigger({ event_type: "*" }), "push", {}, "github")).toBe(true);
    expect(takes(trigger({ event_type: "push" }), "push", {}, "github")).toBe(true);
    expect(takes(trigger({ event_type: "push" }), "pull_request", {}, "github")).toBe(false);
    expect(takes(trigger({ event_type: "Push" }), "push", {}, "github")).toBe(false);
  });

  it("reads an HTTP method in any case (a webhook's, an http connection's), and Slack's aliases", () => {
    expect(takes(trigger({ event_type: "POST" }), "post", {}, "http")).toBe(true);
    expect(takes(trigger({ event_type: "post" }), "post", {})).toBe(true);
    expect(takes(trigger({ event_type: "get" }), "post", {})).toBe(false);
    expect(takes(trigger({ event_type: "message_posted" }), "message", {}, "slack")).toBe(true);
    expect(takes(trigger({ event_type: "message_posted" }), "message", {}, "github")).toBe(false);
  });

  it("then asks the filter, over data and event_type", () => {
    const t = trigger({ event_type: "push", filter: 'data.ref == "main" && event_type == "push"' });
    expect(takes(t, "push", { ref: "main" }, "github")).toBe(true);
    expect(takes(t, "push", { ref: "dev" }, "github")).toBe(false);
  });
});

describe("planDelivery", () => {
  const doc = {
    project: { id: "prj_1", name: "demo", active_deployment_id: "dep_1" },
    connections: [{ name: "sl", integration: "slack" }],
    triggers: [
      trigger({ id: "trg_a", name: "posted", connection: "sl", event_type: "message_posted" }),
      trigger({ id: "trg_b", name: "quiet", connection: "sl", call: null }),
      trigger({ id: "trg_c", name: "other", connection: "gh" }),
      trigger({ id: "trg_d", name: "any", connection: "sl" }),
    ],
  } as unknown as ProjectDoc;

  it("plans a session of each of the connection's triggers with a call that takes the event (aliases too)", () => {
    const plans = planDelivery({
      source: { kind: "connection", name: "sl" },
      doc,
      deployment: { id: "dep_1", buildId: "bld_1" },
      events: [{ type: "message", data: {} as never }],
    });
    expect(plans.map((p) => [p.trigger?.name, p.publish, p.sync])).toEqual([
      ["posted", true, false],
      ["any", false, false],
    ]);
    expect(plans.every((p) => p.sessionId?.startsWith("ses_"))).toBe(true);
  });

  it("lets a webhook's trigger with a call start nothing when its filter fails, yet publish", () => {
    const t = trigger({ type: "webhook", filter: "data.n > 1" });
    const [plan] = planDelivery({
      source: { kind: "webhook", trigger: t },
      doc,
      deployment: { id: "dep_1", buildId: "bld_1" },
      events: [{ type: "post", data: { n: 0 } as never }],
    });
    expect(plan).toMatchObject({ sessionId: null, publish: true, sync: false, trigger: t });
  });
});
