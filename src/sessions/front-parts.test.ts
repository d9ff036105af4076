import { describe, expect, it, vi } from "vitest";
import { eventRecord } from "../../test/support/records.ts";
import { localCluster } from "../cluster/cluster.ts";
import { Subscriptions } from "../events/subscriptions.ts";
import type { Stores } from "../storage/records.ts";
import { storedJson } from "../storage/stored-json.ts";
import { SessionChannel } from "./channel.ts";
import { frontParts } from "./front-parts.ts";
import { ClusterLink } from "./remote.ts";

/** The front's parts over a link of one instance and its subscriptions. */
function parts() {
  const subscriptions = new Subscriptions();
  const lifecycle = { stop: () => null, fence: () => {}, closing: false, startCreated: vi.fn() };
  const link = new ClusterLink(
    localCluster(),
    {} as Stores,
    new SessionChannel(),
    lifecycle,
    subscriptions,
  );
  const front = frontParts({
    lifecycle: lifecycle as never,
    link,
    admit: async () => ({ ok: true }),
    waitOutcome: async () => ({ kind: "timeout" }),
    onEvent: undefined,
  });
  return { subscriptions, link, front };
}

describe("what the front door's messages do on the host", () => {
  it("hands a published event's text to the subscribers of its source, as the event", async () => {
    const { subscriptions, link, front } = parts();
    const event = eventRecord({ id: "evt_1", session_id: null, data: { method: "POST" } as never });
    const id = subscriptions.add("ses_1", "prj_1:hook", null);
    front.publish("prj_1:hook", storedJson(event));
    expect(await subscriptions.next("ses_1", [id], 0)).toEqual({
      event_id: "evt_1",
      session_id: null,
      event_type: event.event_type,
      data: { method: "POST" },
    });
    // A source nobody listens to: its text is not even read.
    const publish = vi.spyOn(link, "publishEvent");
    front.publish("prj_1:other", storedJson(event));
    expect(publish).not.toHaveBeenCalled();
  });
});
