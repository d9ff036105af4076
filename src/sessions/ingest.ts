import { type Clock, isoNow } from "../clock.ts";
import { HooklineError } from "../errors.ts";
import { compileFilter } from "../events/filter.ts";
import { newId } from "../ids.ts";
import type { EventRecord, ProjectDoc, SessionRecord, TriggerRecord } from "../model/records.ts";
import type { OutcomeWait } from "./outcomes.ts";
import type { StartInput } from "./session-record.ts";

// The one way an event becomes a session. Every source (a webhook request, a schedule's slot, a
// workflow's start(), a re-run, a manual run, a connection's event) describes what came in;
// `ingest` alone knows the steps and their order: admit, store (the event with the session's
// first record, in one commit), publish, and hand back the outcome to wait for. The session runs
// only once that commit is in, and after the caller has answered.

/**
 * Where an event came in. It decides which trigger's session it starts, who of the running
 * sessions hears of it (`subscribe(<name>)`), and the rules below (POLICY).
 */
export type IngestSource =
  /** A request to a trigger's webhook (`ANY /webhooks/<webhook_id>`). */
  | { kind: "webhook"; trigger: TriggerRecord }
  /** A slot of a schedule trigger. */
  | { kind: "schedule"; trigger: TriggerRecord }
  /**
   * An inbound event of a connection: it goes to the connection's triggers (each one's
   * `event_type` and `filter` decide) and to the subscribers of `subscribe("<name>")`.
   */
  | { kind: "connection"; name: string }
  /** `start()` in a running session: `trigger` is its parent's with the child's entry point. */
  | { kind: "start"; trigger: TriggerRecord; parentId: string; memo: Record<string, string> }
  /** A new session from the stored event of an earlier one; `rerun`: the journal it reuses. */
  | ({ kind: "rerun"; trigger: TriggerRecord } & Pick<StartInput, "parentId" | "memo" | "rerun">)
  /** Started by hand (or its re-run): `trigger` stands for none, the event's data is the inputs. */
  | ({ kind: "manual"; trigger: TriggerRecord } & Pick<StartInput, "rerun">);

/** What came in: a new event (stored by `ingest`), or, for a re-run, the event stored before. */
export type IngestEvent =
  | {
      type: string;
      data: EventRecord["data"];
      /** A start()'s data in the SDK's wire form. */
      sdk_data?: Record<string, unknown>;
      /** The webhook it came through ("" for none). */
      webhook_id?: string;
      /** When it happened (default: now). */
      at?: string;
    }
  | { stored: EventRecord };

export interface IngestRequest {
  source: IngestSource;
  doc: ProjectDoc;
  /** The deployment whose build the session runs. */
  deployment: { id: string; buildId: string };
  event: IngestEvent;
}

/**
 * The ids an event and its session get, and what the event leads to, decided before anything is
 * stored: a webhook's delivery record (dedup) names them first.
 */
export interface IngestPlan {
  eventId: string;
  /** The session the event starts, or null (no call, not for this trigger's filter). */
  sessionId: string | null;
  /** The trigger whose session starts (or, with none, whose event it is). */
  trigger: TriggerRecord | null;
  /** Whether the source's subscribers hear of the event. */
  publish: boolean;
  /** Whether a held request waits for the session's final outcome. */
  sync: boolean;
}

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

const BUSY = "too many sessions are waiting to run; retry later";
const START_BUSY = "start: too many sessions are running; try later";

/**
 * The rules of each source: whether a trigger's `event_type` and `filter` decide if a session
 * starts; whether subscribers hear of the event (a webhook's call-less trigger: only when its
 * filter passes); where the session may run (`anywhere`: on the shared queue when there is one;
 * `here`: on this instance); and when no session may start now, the refusal (nothing is
 * stored), or null: the event is stored and starts nothing (a schedule's slot is not retried).
 */
const POLICY = {
  webhook: { filtered: true, publish: "passed", where: "anywhere", refuse: BUSY },
  connection: { filtered: true, publish: "always", where: "anywhere", refuse: BUSY },
  schedule: { filtered: false, publish: "always", where: "here", refuse: null },
  start: { filtered: false, publish: "never", where: "here", refuse: START_BUSY },
  rerun: { filtered: false, publish: "never", where: "here", refuse: BUSY },
  manual: { filtered: false, publish: "never", where: "anywhere", refuse: BUSY },
} as const;

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
 * Which trigger the event is for and whether it starts that trigger's session, with new ids.
 * @example const plan = planIngest({ source: { kind: "webhook", trigger }, doc, deployment, event });
 */
export function planIngest(req: IngestRequest): IngestPlan {
  const policy = POLICY[req.source.kind];
  const stored = "stored" in req.event ? req.event.stored : null;
  const type = stored ? stored.event_type : (req.event as { type: string }).type;
  const data = stored ? stored.data : (req.event as { data: unknown }).data;
  const candidates = triggersOf(req.source, req.doc);
  const passes = (t: TriggerRecord) => !policy.filtered || matches(t, type, data);
  const trigger = candidates.find((t) => t.call !== null && passes(t)) ?? candidates[0] ?? null;
  const passed = trigger !== null && passes(trigger);
  const starts = passed && trigger.call !== null;
  const publish =
    policy.publish === "always" ||
    (policy.publish === "passed" && trigger !== null && (trigger.call !== null || passed));
  return {
    eventId: stored ? stored.id : newId("evt"),
    sessionId: starts ? newId("ses") : null,
    trigger,
    publish,
    sync: starts && trigger.is_sync,
  };
}

/**
 * The one operation that turns an event into a session, for every source. In order: admit
 * (refuse, or keep the event only, when no session may start), store the event with the
 * session's first record in one commit (the session runs, or is queued, only once it is in),
 * hand the event to the source's subscribers, and give back the outcome a held request waits
 * for. An event that starts no session is stored alone.
 * @example
 * const ingest = createIngest(parts);
 * const { event, session, outcome } = await ingest({ source: { kind: "webhook", trigger }, doc, deployment, event: { type: "post", data } });
 */
export function createIngest(parts: IngestParts) {
  return async function ingest(
    req: IngestRequest,
    plan: IngestPlan = planIngest(req),
  ): Promise<Ingested> {
    const { source, doc, deployment } = req;
    const policy = POLICY[source.kind];
    let sessionId = plan.sessionId;
    let turnedAway = false;
    // 1. Admit: a session that may not start now refuses the event, or leaves it sessionless.
    const admission = sessionId ? await parts.admit(policy.where, plan.sync) : null;
    if (admission && !admission.ok) {
      if (policy.refuse) throw refusal(policy.refuse, admission);
      turnedAway = true;
      sessionId = null;
    }
    const event = eventRecord(req, plan, sessionId, isoNow(parts.clock));
    const fresh = !("stored" in req.event);
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
  };
}

export type Ingest = ReturnType<typeof createIngest>;

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

/** The 503 a refused event gets: nothing was stored. */
function refusal(words: string, admission: { detail?: string; retryAfterS?: number }) {
  const retryAfterS = Math.max(1, Math.ceil(admission.retryAfterS ?? 1));
  return new HooklineError("unavailable", admission.detail ?? words, { retry_after: retryAfterS });
}

/** The triggers an event of `source` may start, in the project's order. */
function triggersOf(source: IngestSource, doc: ProjectDoc): TriggerRecord[] {
  if (source.kind !== "connection") return [source.trigger];
  return doc.triggers.filter((t) => t.type === "connection" && t.connection === source.name);
}

/** Whether `trigger`'s event type and filter let an event of `type` with `data` start its session. */
function matches(trigger: TriggerRecord, type: string, data: unknown): boolean {
  const t = trigger.event_type;
  if (t && t !== "*" && t !== type) return false;
  return !trigger.filter || compileFilter(trigger.filter).matches({ data, event_type: type });
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
  req: IngestRequest,
  plan: IngestPlan,
  sessionId: string | null,
  now: string,
): EventRecord {
  if ("stored" in req.event) return req.event.stored;
  const { type, data, sdk_data, webhook_id, at } = req.event;
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
