import { type Clock, isoNow, sleepUntil } from "../clock.ts";
import { HooklineError } from "../errors.ts";
import { compileFilter, FilterError } from "../events/filter.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { ActivityReport, Outcome, ProjectDoc, SessionRecord } from "../model/records.ts";
import type { TokenRefresher } from "../oauth/index.ts";
import type { SessionHost, StepRequest } from "../runtime/runtime.ts";
import { MASK } from "../secrets.ts";
import { isAppJwtRequest, serveAppJwt } from "./app-jwt.ts";
import type { SessionJournal } from "./journal.ts";
import type { Outcomes } from "./outcomes.ts";
import type { Parkable, Parking } from "./parking.ts";
import { serveRetry } from "./retries.ts";
import type { SdkService } from "./sdk.ts";
import { redactEntry, sourceKey } from "./session-env.ts";
import type { SessionLog } from "./session-log.ts";
import { serveStep } from "./steps.ts";

/** One session as its host sees it (its context, with its project and a way to write it). */
export interface HostSession {
  record: SessionRecord;
  log: SessionLog;
  doc: ProjectDoc;
  redact: (text: string) => string;
  /** Adds a secret handed to the session (a refreshed token) to what `redact` masks. */
  mask?: (secret: string) => void;
  journal: SessionJournal;
  parkable: Parkable;
  /** Writes the record behind (a timer's deadline must outlive the process). */
  persist: () => void;
  /** A github connection's App private key, for its JWTs (session-env.ts `appKey`). */
  appKey?: (connection: string) => string | undefined;
}

/** The service's pieces every session's host answers from; it owns none of them. */
export interface HostServices {
  outcomes: Outcomes;
  subscriptions: Subscriptions;
  parking: Parking;
  clock: Clock;
  /** Answers the SDK's requests (store, start_session, signal, …); absent: refused. */
  sdk?: Pick<SdkService, "forSession" | "signals">;
  /** Refreshes connections' OAuth tokens (`refresh_oauth`); absent: refused. */
  oauth?: Pick<TokenRefresher, "refresh" | "freshen"> | undefined;
}

/**
 * What a running session asks of the service, answered for one session: its log (prints,
 * activities, outcomes), the final outcome a held request waits for, subscriptions, waits and
 * durable timers. Every step is numbered and (durable) journaled before it is answered; a step
 * the journal holds is answered from it.
 * @example const run = runtime.run(spec, build, createHost(session, services, () => running()));
 */
export function createHost(
  session: HostSession,
  services: HostServices,
  started: () => Promise<void> | undefined,
): SessionHost {
  const { record, log, journal } = session;
  log.inFlight.clear(); // a new attempt's process numbers its activities from 1
  const sdk = services.sdk?.forSession({ ...session, parking: services.parking });
  // Tokens refreshed in the session (refresh_oauth) are masked in its log as its secrets are,
  // and in its final error (the session's own redaction, `mask`, when it has one).
  const fresh: string[] = [];
  const redact = (text: string) =>
    fresh.reduce((t, token) => t.replaceAll(token, MASK), session.redact(text));
  const mask = (token: string) => {
    if (token.length >= 4) fresh.push(token);
    session.mask?.(token);
  };
  const at: Performing = {
    session: { ...session, redact },
    services,
    t: () => isoNow(services.clock),
    mask,
  };

  /** Performs a step the journal does not hold: the answer of each kind, worked out now. */
  async function perform(req: StepRequest, seq: number): Promise<unknown> {
    switch (req.kind) {
      case "subscribe":
        return subscribe(at, req.name, req.filter);
      case "next_event":
        return nextEvent(at, req.ids, req.timeoutMs);
      case "unsubscribe":
        return unsubscribe(at, req.id);
      case "sleep":
        return sleep(at, seq, req.ms);
      case "outcome":
        return offerOutcome(at, req.outcome);
      case "activity":
      case "retry": // served by serveRetry, below
        return null; // its result is the step itself
      default:
        if (sdk) return sdk(req.kind, req.fields);
        throw new HooklineError("unprocessable", `${req.kind}: not served by this service yet`);
    }
  }

  return {
    started,
    print: (text, stream, outside) =>
      log.append({
        t: at.t(),
        kind: "print",
        text: redact(text),
        stream,
        ...(outside && { outside }),
      }),
    activityStarted: ({ running_ms = 0, ...s }) =>
      log.started({ ...s, t: new Date(Date.parse(at.t()) - running_ms).toISOString() }),
    activity: (r) => log.append(activityEntry(at.t(), r, redact), r.id),
    async step(req) {
      if (isAppJwtRequest(req)) return serveAppJwt(req, session.appKey, record.project_name);
      // A token is never journaled: a replay asks the service again, as a live run does.
      if (req.kind === "refresh_oauth") return refreshOAuth(at, req.fields);
      try {
        if (req.kind === "retry") {
          const wait = (until: number) => retryWait(at, req.function, until);
          return await serveRetry(journal, req, services.clock.now(), wait);
        }
        return await serveStep(journal, req, perform);
      } finally {
        // The wait of a parked session is over (on record, or it failed): a replay goes on.
        if (WAITS.has(req.kind)) services.parking.wake(record.id);
      }
    },
  };
}

/**
 * The SDK's `refresh_oauth(integration, connection)`: the connection's token refreshed by the
 * service (the client secret stays here), answered as `{token, expiry}` (expiry RFC 3339 or
 * null). Allowed inside activities, where client libraries refresh.
 */
async function refreshOAuth(at: Performing, fields: Record<string, unknown>) {
  const { session, services } = at;
  const connection = typeof fields.connection === "string" ? fields.connection : "";
  try {
    if (!services.oauth) throw new Error("this service does not refresh OAuth tokens");
    const t = await services.oauth.refresh(session.record.project_id, connection, true);
    const expiry = t.expiry === undefined ? null : new Date(t.expiry).toISOString();
    at.mask(t.token);
    return { ok: true as const, value: { token: t.token, expiry } };
  } catch (e) {
    const message = `refresh_oauth(${JSON.stringify(connection)}): ${(e as Error).message}`;
    return { ok: false as const, error: "AutoKittehError", message };
  }
}

/** Steps that wait, and may park their session meanwhile. */
const WAITS = new Set<StepRequest["kind"]>(["next_event", "sleep", "next_signal", "retry"]);

/** What a performed step is answered with: its session, the service's pieces, and the log's clock. */
interface Performing {
  session: HostSession;
  services: HostServices;
  t: () => string;
  /** Masks a token refresh_oauth handed to the session, in its log and its final error. */
  mask: (token: string) => void;
}

/** Subscribes the session to one of its project's sources; answers the subscription's id. */
function subscribe({ session, services, t }: Performing, name: string, filter: string): string {
  const source = sourceKey(session.doc, name);
  if (!source) {
    // AutoKitteh's words, so programs that match on them go on working.
    throw new HooklineError("bad_request", `source "${name}" not found in this project`);
  }
  let compiled = null;
  try {
    compiled = filter ? compileFilter(filter) : null;
  } catch (err) {
    if (err instanceof FilterError) throw new HooklineError("bad_request", err.message);
    throw err;
  }
  const id = services.subscriptions.add(session.record.id, source, compiled);
  session.log.append({ t: t(), kind: "subscribe", subscription_id: id, source: name, filter });
  return id;
}

/** Waits for the next event on the given subscriptions (parkable while it waits). */
async function nextEvent(
  { session, services, t }: Performing,
  ids: string[],
  timeoutMs: number | null,
): Promise<unknown> {
  const waiting = services.subscriptions.next(session.record.id, ids, timeoutMs);
  services.parking.watch(session.parkable, waiting, timeoutMs ?? Number.POSITIVE_INFINITY);
  const event = await waiting;
  session.log.append({
    t: t(),
    kind: "event",
    subscription_id: null,
    event_id: event?.event_id ?? null,
  });
  return event;
}

/** Ends one of the session's own subscriptions; another session's is unknown to it. */
function unsubscribe({ session, services }: Performing, id: string): null {
  if (!services.subscriptions.has(id, session.record.id)) {
    throw new HooklineError("bad_request", `unknown subscription "${id}"`);
  }
  services.subscriptions.remove(id);
  return null;
}

/**
 * A durable timer: its deadline is written with the record the first time step `seq` is served,
 * so a resumed session waits only for what is left of it (parkable while it waits).
 */
async function sleep({ session, services }: Performing, seq: number, ms: number): Promise<null> {
  const { record } = session;
  const { clock } = services;
  if (record.timer?.seq !== seq) {
    record.timer = { seq, until: clock.now() + ms };
    session.persist(); // the deadline outlives this process, and this service
  }
  const waiting = sleepUntil(clock, record.timer.until);
  services.parking.watch(session.parkable, waiting, record.timer.until - clock.now());
  await waiting;
  return null;
}

/** An activity's report as its log entry, its error redacted. */
function activityEntry(t: string, r: ActivityReport, redact: (text: string) => string) {
  return {
    t,
    kind: "activity" as const,
    function: r.function,
    duration_ms: r.duration_ms,
    ok: r.ok,
    ...(r.error ? { error: redact(r.error) } : {}),
    ...(r.retry && { retry: r.retry }),
  };
}

/** The wait before a durable activity's next attempt (parkable while it waits). */
async function retryWait({ session, services }: Performing, fn: string, until: number) {
  const { clock } = services;
  const waiting = sleepUntil(clock, until);
  services.parking.watch(session.parkable, waiting, until - clock.now(), `to retry ${fn}`);
  await waiting;
}

/** Offers an HTTP outcome to whoever waits for it: this session's request, or another event's. */
function offerOutcome({ session, services }: Performing, outcome: Outcome): null {
  const { record } = session;
  const other = outcome.event_id;
  const entries =
    other && other !== record.event_id
      ? services.outcomes.offerForEvent(other, outcome)
      : services.outcomes.offer(record.id, outcome, record.is_sync);
  for (const entry of entries) session.log.append(redactEntry(entry, session.redact));
  return null;
}
