import type { Fire } from "./plan.ts";
import type { Service } from "./service.ts";

/** What sending a fire item did: whether it was taken, and what the service answered. */
export interface Sent {
  what: string;
  accepted: boolean;
  detail: string;
  /** A request sent without waiting for its answer (`wait: false`): the answer, later. */
  later?: Promise<string>;
}

/** A fire item's kind and name, as printed: `webhook quickstart_webhook`. */
export function describe(f: Fire): string {
  if (f.webhook) return `webhook ${f.webhook}`;
  if (f.manual) return `manual ${f.manual}`;
  if (f.schedule) return `schedule ${f.schedule}`;
  return `event ${f.event}${f.kind ? `:${f.kind}` : ""} on ${f.connection}`;
}

/** The request's body and headers from `json` or `body`, and `headers`. */
export function requestBody(f: Fire): { body?: string; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (f.json !== undefined) {
    body = JSON.stringify(f.json);
    headers["content-type"] = "application/json";
  } else if (f.form !== undefined) {
    body = new URLSearchParams(f.form).toString();
    headers["content-type"] = "application/x-www-form-urlencoded";
  } else if (f.body !== undefined) {
    body = f.body;
    headers["content-type"] = "text/plain";
  }
  for (const [k, v] of Object.entries(f.headers ?? {})) headers[k.toLowerCase()] = String(v);
  return { body, headers };
}

async function webhook(svc: Service, project: string, f: Fire): Promise<Sent> {
  const what = describe(f);
  const t = (await svc.triggers(project)).find((x) => x.name === f.webhook);
  if (!t) return { what, accepted: false, detail: `no trigger ${f.webhook} was deployed` };
  if (!t.webhook_path) return { what, accepted: false, detail: `${f.webhook} is not a webhook` };
  const method = (f.method ?? (t.event_type || "post")).toUpperCase();
  const { body, headers } = requestBody(f);
  const query = f.query ? `?${new URLSearchParams(f.query).toString()}` : "";
  const suffix = f.path ? `/${f.path.replace(/^\/+/, "")}` : "";
  const answer = fetch(svc.url + t.webhook_path + suffix + query, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : body,
    redirect: "manual",
  }).then(async (res) => {
    const text = (await res.text()).slice(0, 3000);
    return `${res.status} ${res.headers.get("content-type") ?? ""} ${text}`.trim();
  });
  const label = `${what} (${method}${suffix ? ` ${suffix}` : ""})`;
  // A sync webhook answers once its session does: `wait: false` goes on before the answer.
  if (f.wait === false) return { what: label, accepted: true, detail: "sent", later: answer };
  const detail = await answer;
  // The service's refusals are problem+json; any other answer is the session's (a sync webhook).
  const refused = Number(detail.slice(0, 3)) >= 400 && detail.includes("application/problem+json");
  return { what: label, accepted: !refused, detail };
}

async function startByHand(
  svc: Service,
  project: string,
  entrypoint: string,
  inputs: Record<string, unknown>,
  durable: boolean,
): Promise<{ accepted: boolean; detail: string }> {
  const args = Object.entries(inputs).flatMap(([k, v]) => ["--input", `${k}=${JSON.stringify(v)}`]);
  if (durable) args.push("--durable");
  const r = await svc.cli("session", "start", "-p", project, "-e", entrypoint, ...args);
  return { accepted: r.code === 0, detail: [...r.out, ...r.err].join(" | ") };
}

async function manual(svc: Service, project: string, f: Fire): Promise<Sent> {
  const r = await startByHand(svc, project, f.manual!, f.inputs ?? {}, Boolean(f.durable));
  return { what: describe(f), ...r };
}

/**
 * A schedule trigger fired as its scheduler does: its `call` started on the active deployment
 * with the event data a firing carries (src/platform/schedule-fire.ts), durable as the trigger
 * is; here through `cli session start` (the service has no "fire now").
 */
async function schedule(svc: Service, project: string, f: Fire): Promise<Sent> {
  const what = describe(f);
  const t = (await svc.triggers(project)).find((x) => x.name === f.schedule);
  if (!t) return { what, accepted: false, detail: `no trigger ${f.schedule} was deployed` };
  if (t.type !== "schedule")
    return { what, accepted: false, detail: `${f.schedule} is a ${t.type}` };
  if (!t.call) {
    return {
      what,
      accepted: false,
      detail: `${f.schedule} has no call (its events go to subscribers)`,
    };
  }
  const now = new Date().toISOString();
  const data = {
    schedule: t.schedule ?? "",
    timezone: t.timezone ?? "UTC",
    due: now,
    fired: now,
    missed: 0,
    ...(f.inputs ?? {}),
  };
  const r = await startByHand(svc, project, t.call, data, t.is_durable);
  return { what: `${what} (${t.call})`, ...r };
}

/** Sends connection events (events.ts, with the entry and the stand-in bound). */
export type EventSender = (project: string, f: Fire) => Promise<Sent>;

/**
 * Sends one fire item to the service: a webhook request, a session by hand, a schedule's
 * firing, or a connection event (`events`).
 */
export async function send(
  svc: Service,
  project: string,
  f: Fire,
  events: EventSender,
): Promise<Sent> {
  try {
    if (f.webhook) return await webhook(svc, project, f);
    if (f.manual) return await manual(svc, project, f);
    if (f.schedule) return await schedule(svc, project, f);
    return await events(project, f);
  } catch (e) {
    return { what: describe(f), accepted: false, detail: `harness: ${(e as Error).message}` };
  }
}
