import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { type Clock, isoNow, systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { EventRecord } from "../model/records.ts";
import type { ObservedEnv, Observer } from "../observe/observer.ts";
import { createAddressCache, type ResolvedAddress } from "../routes/address-cache.ts";
import { webhookDedupKey } from "../routes/dedup.ts";
import type { DeliveryLimits } from "../routes/delivery.ts";
import { answerErrors } from "../routes/problem.ts";
import { webhookRoutes } from "../routes/webhooks.ts";
import { type Admission, createIngest, type IngestParts } from "../sessions/ingest.ts";
import type { OutcomeWait } from "../sessions/outcomes.ts";
import { newSessionRecord } from "../sessions/session-record.ts";
import { createSession } from "../sessions/writes-apart.ts";
import type { Stores } from "../storage/records.ts";
import { type StoredJson, storedJson } from "../storage/stored-json.ts";
import type { FrontGate } from "./gate.ts";
import type { FrontMessage, HostMessage } from "./messages.ts";

/** What the front door takes webhooks with. */
export interface DoorDeps {
  stores: Stores;
  gate: FrontGate;
  limits: DeliveryLimits & { syncTimeoutMs: number };
  /** Tells the session host (messages arrive in order). */
  post: (message: FrontMessage) => void;
  /** Passes a request on to the session host, with its body if it was read here. */
  forward: (req: IncomingMessage, res: ServerResponse) => void;
  observer: Observer;
  log: Logger;
  clock?: Clock;
}

/** Paths whose requests may change projects: their answers drop what the front knows. */
const CHANGES = /^\/(api|ui|oauth)\//;

/** `/webhooks/<id>` or `/webhooks/<id>/<suffix>` → the id; null for any other path. */
function webhookId(url: string | undefined): string | null {
  const m = /^\/webhooks\/([^/?#]+)/.exec(url ?? "");
  try {
    return m ? decodeURIComponent(m[1]!) : null;
  } catch {
    return null; // not an id the front knows: the host answers it
  }
}

/** Node's request headers as the one `Headers` method `webhookDedupKey` reads. */
function headerReader(req: IncomingMessage): Headers {
  const get = (name: string) => {
    const v = req.headers[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  };
  return { get } as Headers;
}

/**
 * The front door: the service's listening socket on a thread that runs nothing else. A webhook
 * without a delivery key to remember is taken here the one way every delivery is taken
 * (src/routes/webhooks.ts): its event and the session's first record committed to the same
 * store before the answer, the session handed to the host to run (a sync webhook's request
 * waits for the outcome the host sends back); everything else (repeats, connections'
 * deliveries, the API, the UI, a stop under way) goes to the host as it came. An accept thus
 * never waits behind the sessions' work.
 * @example const door = frontDoor(deps); server.on("request", door.handle);
 */
export function frontDoor(deps: DoorDeps) {
  const { stores, gate, forward, observer, log } = deps;
  let addresses = createAddressCache(stores);
  const calls = hostCalls(deps.post, gate);
  const ingest = createIngest(frontIngest(deps, calls));
  const app = new Hono<ObservedEnv>();
  app.use("*", observer.middleware);
  answerErrors(app, log);
  const taking = { addresses: { get: (id: string) => addresses.get(id) }, sessions: ingest };
  app.route(
    "/webhooks",
    webhookRoutes({ ...taking, limits: deps.limits }, deps.limits.syncTimeoutMs),
  );
  const listener = getRequestListener(app.fetch);

  const takesHere = (address: ResolvedAddress | null, req: IncomingMessage) => {
    const trigger = address?.trigger;
    return !!trigger && webhookDedupKey(trigger, headerReader(req)) === null;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = webhookId(req.url);
    if (id !== null && !gate.draining && !gate.closing) {
      const address = await addresses.get(id).catch(() => null);
      if (takesHere(address, req)) {
        // Counted until answered: a drain waits for held requests (and the rest) to be.
        gate.taking(1);
        res.once("close", () => gate.taking(-1));
        return listener(req, res);
      }
    }
    if (CHANGES.test(req.url ?? "") && req.method !== "GET" && req.method !== "HEAD") {
      // A deploy or a var changed through the host: the next webhook reads where it leads anew
      // (the host also says so, but its message may come after the client's next request).
      res.once("finish", () => {
        addresses = createAddressCache(stores);
      });
      addresses = createAddressCache(stores);
    }
    forward(req, res);
  };
  return {
    handle(req: IncomingMessage, res: ServerResponse): void {
      handle(req, res).catch((err: unknown) => {
        log.error(`${req.method} ${req.url}`, err);
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    },
    /** What the host says: a project changed (its addresses are read again), or an answer. */
    heard(m: HostMessage): void {
      if (m.t === "invalidate") addresses.invalidate(m.projectId);
      else calls.heard(m);
    },
  };
}

/**
 * What the front asks the host and waits for: a held session's admission (the host knows the
 * runtime's queue), and a held session's outcome (the host runs it). Each answer comes once.
 */
function hostCalls(post: (m: FrontMessage) => void, gate: Pick<FrontGate, "waiting">) {
  const admissions = new Map<number, (a: Admission) => void>();
  const outcomes = new Map<
    string,
    { wait: Promise<OutcomeWait>; settle: (w: OutcomeWait) => void }
  >();
  let next = 1;
  return {
    admit(): Promise<Admission> {
      const id = next++;
      return new Promise((resolve) => {
        admissions.set(id, resolve);
        post({ t: "admit", id });
      });
    },
    /**
     * The host will answer this session's outcome (before it is told to run it). Until then the
     * request only waits: the gate does not count it as the front's work.
     */
    hold(sessionId: string): void {
      let settle!: (w: OutcomeWait) => void;
      const wait = new Promise<OutcomeWait>((r) => {
        settle = r;
      });
      gate.waiting(1);
      outcomes.set(sessionId, {
        wait,
        settle: (w) => {
          gate.waiting(-1);
          settle(w);
        },
      });
    },
    outcome(sessionId: string): Promise<OutcomeWait> {
      const held = outcomes.get(sessionId);
      return held ? held.wait : Promise.resolve({ kind: "timeout" });
    },
    heard(m: HostMessage): void {
      if (m.t === "admitted") {
        admissions.get(m.id)?.(m.admission);
        admissions.delete(m.id);
      } else if (m.t === "outcome") {
        outcomes.get(m.sessionId)?.settle(m.wait);
        outcomes.delete(m.sessionId);
      }
    },
  };
}

/**
 * The steps of ingest as the front takes them: admitted while the shared counters leave room
 * (a held session: by the host, which knows the runtime's queue), the event and the session's
 * `created` record in one commit, then the session handed to the host (which runs it as it
 * runs one taken from a queue; a held one's outcome is the host's to answer); an event that
 * starts no session is stored and the host told, for retention. The record and the event cross
 * to the host as the JSON text stored, made once.
 */
function frontIngest(deps: DoorDeps, calls: ReturnType<typeof hostCalls>): IngestParts {
  const { stores, gate, post, log, limits } = deps;
  const clock = deps.clock ?? systemClock;
  // An event's text, made once for its commit, its hand-over and its publish.
  const eventTexts = new WeakMap<EventRecord, StoredJson<EventRecord>>();
  const eventText = (event: EventRecord) => {
    let text = eventTexts.get(event);
    if (text === undefined) {
      text = storedJson(event);
      eventTexts.set(event, text);
    }
    return text;
  };
  return {
    clock,
    // A held session waits for no process while a slot is free: admitted here, as the host
    // would; else the host says (it knows how long the wait would be, and its refusal's words).
    admit: async (_where, sync) => {
      if (!sync) return { ok: gate.reserve() };
      return !gate.full && gate.reserve() ? { ok: true } : calls.admit();
    },
    async storeEvent(event) {
      await stores.events.put(event);
      post({ t: "event" });
    },
    publish: (source, event) => post({ t: "publish", source, event: eventText(event) }),
    async begin(input, _where, storeEvent) {
      const record = newSessionRecord(input, isoNow(clock));
      const texts = { record: storedJson(record), event: eventText(input.event) };
      try {
        const event = storeEvent ? input.event : undefined;
        await createSession({ stores, log }, record, { event, texts });
      } catch (err) {
        gate.release();
        throw err;
      }
      const id = record.id;
      if (!input.trigger.is_sync) post({ t: "adopt", id, ...texts });
      else {
        calls.hold(id);
        post({ t: "adopt", id, ...texts, holdMs: limits.syncTimeoutMs });
      }
      return record;
    },
    outcome: (sessionId) => calls.outcome(sessionId),
  };
}
