import type { ConnectionView } from "../../src/wire/views.ts";
import { describe, type Sent } from "./fire.ts";
import type { Fire } from "./plan.ts";
import type { EventContext } from "./secrets.ts";

export type { EventContext };

/** Google Calendar / Drive push notifications: not delivered yet. */
export async function googlePush(
  _ctx: EventContext,
  f: Fire,
  _conn: ConnectionView,
): Promise<Sent> {
  return { what: describe(f), accepted: false, detail: "harness: Google push not delivered yet" };
}

/** Gmail / Forms Pub/Sub pushes: not delivered yet. */
export async function pubsubPush(
  _ctx: EventContext,
  f: Fire,
  _conn: ConnectionView,
): Promise<Sent> {
  return { what: describe(f), accepted: false, detail: "harness: Pub/Sub push not delivered yet" };
}
