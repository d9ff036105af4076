import type { ConnectionView } from "../../src/wire/views.ts";
import type { Sent } from "./fire.ts";
import type { Entry, Fire } from "./plan.ts";
import type { Service } from "./service.ts";
import type { StandIn } from "./stand-in.ts";

/** What a connection event's delivery needs: the service, the stand-in, the plan entry. */
export interface EventContext {
  svc: Service;
  api: StandIn;
  entry: Entry;
  /** Discord's gateway dispatch, when a stand-in gateway runs. */
  discord?: (ctx: EventContext, f: Fire, conn: ConnectionView) => Promise<Sent>;
}

/**
 * The var each integration checks its deliveries with (any of `names`; the first is the one the
 * harness sets when the entry sets none), and the value it sets: what a user pastes from the
 * provider's settings.
 */
const SECRETS: Record<string, { names: string[]; value: string; plain?: boolean }> = {
  slack: {
    names: ["signing_secret", "private_signing_secret"],
    value: "kittehub-slack-signing-secret",
  },
  github: { names: ["webhook_secret", "pat_secret"], value: "kittehub-github-webhook-secret" },
  jira: { names: ["webhook_secret"], value: "kittehub-jira-webhook-secret" },
  confluence: { names: ["webhook_secret"], value: "kittehub-confluence-webhook-secret" },
  http: { names: ["auth"], value: "Bearer kittehub-http-token" },
  // Not a secret: the form AutoKitteh's set-up asks for; the service watches it.
  googleforms: { names: ["FormID"], value: "kittehub-form", plain: true },
};

/** The secret var the harness sets for a connection (`[name, value, flag]`), unless the entry does. */
export function defaultSecret(
  e: Entry,
  conn: string,
  integration: string,
): [string, string, string] | null {
  const s = SECRETS[integration];
  if (!s) return null;
  const given = e.vars?.[conn] ?? {};
  if (s.names.some((n) => n in given)) return null;
  return [s.names[0]!, s.value, s.plain ? "" : "--secret"];
}

/** The secret a delivery to this connection is signed with: the entry's, else the harness's. */
export function secretOf(e: Entry, conn: string, integration: string): string {
  const s = SECRETS[integration];
  if (!s) return "";
  const given = e.vars?.[conn] ?? {};
  for (const n of s.names) if (n in given) return String(given[n]);
  return s.value;
}
