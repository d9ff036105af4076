import { type Clock, isoNow } from "../clock.ts";
import { HooklineError } from "../errors.ts";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import type { OutcomeWait } from "./outcomes.ts";
import {
  type Delivery,
  type IngestPlan,
  type IngestRequest,
  type IngestSource,
  POLICY,
  planDelivery,
} from "./plan.ts";
import type { StartInput } from "./session-record.ts";

export type { Delivery, IngestEvent, IngestRequest, IngestSource } from "./plan.ts";

// The one way an event becomes a session. Every source (a webhook request, a connection's
// delivery, a schedule's slot, a workflow's start(), a re-run, a manual run) describes what came
// in; `ingest`
// alone plans it (plan.ts: which triggers take it, by one rule) and knows the steps and their
// order: admit, store (the event with the session's first record, in one commit), publish, and
// hand back the outcome to wait for. The session runs only once that commit is in, and after
// the caller has answered.

/** What an ingested event became. */
export interface Ingested {
  event: EventRecord;
  /** The session it started (as created), or null. */
  session: SessionRecord | null;
  /** A synchronous session's first final outcome, its end, or a timeout; null when not sync. */
  outcome: ((timeoutMs: number) => Promise<OutcomeWait>) | null;
  /** A session would have started, but none may now (a schedule's slot keeps its event). */
  turnedAway: boolean;
}

/**
 * Whether a session may start now. A refusal may say why (else the source's own words) and in
 * how many seconds a retry may fare better (`Retry-After`).
 */
export type Admission = { ok: true } | { ok: false; detail?: string; retryAfterS?: number };

/**
 * A delivery planned, not yet run: the ids it is known by before anything is stored (a
 * delivery's dedup record holds them), and the run.
 */
export interface Prepared {
  /** The first event's id: the delivery's. */
  readonly eventId: string;
  /** The first session it starts, or null. */
  readonly sessionId: string | null;
  /** Whether a held request waits for that session's final outcome. */
  readonly sync: boolean;
  /**
   * Ingests each planned event in order (see `createIngest`); resolves with what each became.
   * Rejects at the first refusal: the events before it are stored and their sessions started.
   */
  run(): Promise<Ingested[]>;
}

/** What `ingest` is made of: the parts of the session core it drives, in the order it does. */
export interface IngestParts {
  clock: Clock;
  /**
   * Whether a session may start now: here (this instance's slots) or anywhere (the queue's
   * bound); a synchronous one also only if it can expect a process well within its time-out.
   */
  admit: (where: "here" | "anywhere", sync: boolean) => Promise<Admission>;
  /** Stores an event that starts no session (and tells retention). */
  storeEvent: (event: EventRecord) => Promise<void>;
  /** Hands the event to the subscribers of `source` (`<project_id>:<name>`), on every instance. */
  publish: (source: string, event: EventRecord) => void;
  /**
   * Creates the session, its record and (`storeEvent`) its event in one commit (and tells
   * retention), and starts it here or queues it where any instance may take it. Resolves once
   * that commit is in storage: the record is readable from any instance, and the session runs
   * only after, in a later turn of the event loop. Rejects when the commit failed: nothing is
   * stored and nothing runs.
   */
  begin: (
    input: StartInput,
    where: "here" | "anywhere",
    storeEvent: boolean,
  ) => Promise<SessionRecord>;
  /** A held request's wait on a session's first final outcome. */
  outcome: (sessionId: string, timeoutMs: number) => Promise<OutcomeWait>;
}

/**
 * The one operation that turns an event into a session, for every source. `prepare` plans a
 * delivery (its events, each one's triggers, their ids); each planned event then goes, in
 * order: admit (refuse, or keep the event only, when no session may start), store the event
 * with the session's first record in one commit (the session runs, or is queued, only once it
 * is in), hand the event to the source's subscribers, and give back the outcome a held request
 * waits for. An event that starts no session is stored alone. `ingest(req)` is one event,
 * planned and run.
 * @example
 * const ingest = createIngest(parts);
 * const { event, session, outcome } = await ingest({ source: { kind: "webhook", trigger }, doc, deployment, event: { type: "post", data } });
 * const delivery = ingest.prepare({ source: { kind: "connection", name: "gh" }, doc, deployment, events });
 */
export function createIngest(parts: IngestParts) {
  const prepare = (delivery: Delivery): Prepared => {
    const plans = planDelivery(delivery);
    const first = plans[0]!;
    return {
      eventId: first.eventId,
      sessionId: first.sessionId,
      sync: first.sync,
      async run() {
        const done: Ingested[] = [];
        // In order: a bound of sessions admits the first ones, and subscribers hear the
        // delivery's events as they came.
        for (const plan of plans) done.push(await ingestOne(parts, delivery, plan));
        return done;
      },
    };
  };
  const ingest = async (req: IngestRequest): Promise<Ingested> => {
    const [done] = await prepare({ ...req, events: [req.event] }).run();
    return done!;
  };
  return Object.assign(ingest, { prepare });
}

export type Ingest = ReturnType<typeof createIngest>;

/** One planned event through the steps: admit, store (with its session), publish, wait. */
async function ingestOne(
  parts: IngestParts,
  req: Omit<IngestRequest, "event">,
  plan: IngestPlan,
): Promise<Ingested> {
  const { source, doc, deployment } = req;
  const policy = POLICY[source.kind];
  let sessionId = plan.sessionId;
  let turnedAway = false;
  // 1. Admit: a session that may not start now refuses the event, or leaves it sessionless.
  const admission = sessionId ? await parts.admit(policy.where, plan.sync) : null;
  if (admission && !admission.ok) {
    if (policy.refuse) throw busy(policy.refuse, admission);
    turnedAway = true;
    sessionId = null;
  }
  const event = eventRecord(req, plan, sessionId, isoNow(parts.clock));
  const fresh = !("stored" in plan.event);
  const publish = () => {
    if (plan.publish) parts.publish(`${doc.project.id}:${sourceName(source, plan)}`, event);
  };
  if (!sessionId || !plan.trigger) {
    // 2. Store: the event is on record before anything answers. 3. Publish: the source's
    // subscribers hear of it, on every instance.
    if (fresh) await parts.storeEvent(event);
    publish();
    return { event, session: null, outcome: null, turnedAway };
  }
  // 2. Store and queue, in one commit: the event and the session's first record. A
  // synchronous session runs here (which holds the request); others where allowed. A sender
  // gets the session's id once its record is readable (read your writes).
  const input: StartInput = {
    sessionId,
    doc,
    trigger: plan.trigger,
    deploymentId: deployment.id,
    buildId: deployment.buildId,
    event,
    ...lineage(source),
  };
  const session = await parts.begin(input, plan.sync ? "here" : policy.where, fresh);
  // 3. Publish.
  publish();
  // 4. Wait: a held request gets the first final outcome (or the end, or a timeout).
  const outcome = plan.sync ? (ms: number) => parts.outcome(sessionId, ms) : null;
  return { event, session, outcome, turnedAway };
}

/**
 * The way in, handed out before it is built: a session's `start()` goes in through it, and
 * `ingest` needs the lifecycle that runs sessions, so the core's one loop closes here. Opened
 * once `ingest` exists; a call before that is a fault of the construction.
 * @example const door = ingestDoor(); const sdk = new SdkService({ …, ingest: door }); door.open(ingest);
 */
export function ingestDoor() {
  let through: Ingest | null = null;
  const door = (req: IngestRequest) => {
    if (!through) throw new Error("ingest: called before the session core was built");
    return through(req);
  };
  return Object.assign(door, {
    open(ingest: Ingest) {
      through = ingest;
    },
  });
}

/** The refusal of an event no session may take now (a 503 over HTTP): nothing was stored. */
function busy(words: string, admission: { detail?: string; retryAfterS?: number }) {
  const retryAfterS = Math.max(1, Math.ceil(admission.retryAfterS ?? 1));
  return new HooklineError("unavailable", admission.detail ?? words, { retry_after: retryAfterS });
}

/** The name subscribers give to `subscribe()`: the trigger's, or the connection's. */
function sourceName(source: IngestSource, plan: IngestPlan): string {
  return source.kind === "connection" ? source.name : (plan.trigger?.name ?? "");
}

/** A child's (or a re-run child's) parent and memo; whether started by hand; a re-run's journal. */
function lineage(source: IngestSource): Pick<StartInput, "parentId" | "memo" | "manual" | "rerun"> {
  if (source.kind === "manual") return { manual: true, rerun: source.rerun };
  if (source.kind !== "start" && source.kind !== "rerun") return {};
  const rerun = source.kind === "rerun" ? source.rerun : undefined;
  return { parentId: source.parentId, memo: source.memo, rerun };
}

function eventRecord(
  req: Omit<IngestRequest, "event">,
  plan: IngestPlan,
  sessionId: string | null,
  now: string,
): EventRecord {
  if ("stored" in plan.event) return plan.event.stored;
  const { type, data, sdk_data, webhook_id, at } = plan.event;
  const trigger = plan.trigger;
  return {
    id: plan.eventId,
    project_id: req.doc.project.id,
    trigger_id: trigger?.id ?? "",
    trigger_name: trigger?.name ?? sourceName(req.source, plan),
    webhook_id: webhook_id ?? "",
    ...(req.source.kind === "connection" ? { connection: req.source.name } : {}),
    event_type: type,
    data,
    ...(sdk_data !== undefined ? { sdk_data } : {}),
    session_id: sessionId,
    created_at: at ?? now,
  };
}
