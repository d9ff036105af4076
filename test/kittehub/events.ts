import { describe, type Sent } from "./fire.ts";
import type { Fire } from "./plan.ts";
import type { Service } from "./service.ts";

type Deliver = (svc: Service, project: string, f: Fire) => Promise<Sent>;

/** The connection event kinds the harness delivers, by `event:` name. */
const KINDS: Record<string, Deliver> = {};

/**
 * Delivers a connection event as its provider does, to the connection's inbound URL.
 */
export async function sendEvent(svc: Service, project: string, f: Fire): Promise<Sent> {
  const deliver = KINDS[f.event ?? ""];
  if (!deliver) {
    return {
      what: describe(f),
      accepted: false,
      detail: `harness: events of kind ${f.event} are not delivered yet (known: ${Object.keys(KINDS).join(", ") || "none"})`,
    };
  }
  return deliver(svc, project, f);
}
