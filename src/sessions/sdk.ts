import * as v from "valibot";
import { type Clock, isoNow } from "../clock.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { HooklineError } from "../errors.ts";
import type { ProjectKv } from "../kv/project-kv.ts";
import { handleSdkRequest } from "../kv/sdk-requests.ts";
import type { ProjectDoc, SdkRequestKind, SessionRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";
import type { buildCache } from "./build-cache.ts";
import { checkLoc } from "./entry-points.ts";
import type { Ingested, IngestRequest } from "./ingest.ts";
import type { Parkable, Parking } from "./parking.ts";
import { checkProject, childStart, StartFields } from "./sdk-start.ts";
import type { SessionLog } from "./session-log.ts";
import { type SignalMessage, SignalQueues } from "./signals.ts";

/** One session as the SDK requests see it. */
export interface SdkSession {
  record: SessionRecord;
  doc: ProjectDoc;
  log: SessionLog;
  parking: Parking;
  parkable: Parkable;
  /** Writes the record behind. */
  persist: () => void;
}

export interface SdkDeps {
  stores: Stores;
  kv: ProjectKv;
  /** The service's external base URL (SVC_PUBLIC_URL, else the listening address). */
  publicUrl: () => string;
  cluster: Cluster;
  clock: Clock;
  builds: ReturnType<typeof buildCache>;
  /** A session running (or parked) on this instance: its record and log, else null. */
  live: (id: string) => { record: SessionRecord; log: SessionLog } | null;
  /** The one way in: a start()'s event becomes the child session. */
  ingest: (req: IngestRequest) => Promise<Ingested>;
}

/** Bytes of a signal's payload as JSON: a full queue then holds at most 64 MiB. */
export const MAX_SIGNAL_PAYLOAD = 64 * 1024;

const SignalFields = v.object({
  session_id: v.string(),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  payload: v.pipe(
    v.nullish(v.unknown(), null),
    v.check(
      (p) => Buffer.byteLength(JSON.stringify(p)) <= MAX_SIGNAL_PAYLOAD,
      `over the limit of ${MAX_SIGNAL_PAYLOAD} bytes of JSON`,
    ),
  ),
});
const NextSignalFields = v.object({
  names: v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1)),
  timeout: v.nullish(v.pipe(v.number(), v.minValue(0)), null),
});
const OutcomeValueFields = v.object({ value: v.nullish(v.unknown(), null) });

function parse<S extends v.GenericSchema>(kind: string, schema: S, fields: unknown) {
  const r = v.safeParse(schema, fields);
  if (r.success) return r.output as v.InferOutput<S>;
  const issue = r.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  throw new HooklineError("bad_request", `${kind}: ${path ? `${path}: ` : ""}${issue.message}`);
}

const ENDED = new Set(["completed", "error", "stopped"]);

/**
 * The service's side of the SDK's AutoKitteh surface, for the sessions of this instance: the
 * project store, `start`, `signal` / `next_signal` (queues here; a signal for a session of
 * another instance travels over the cluster bus), `outcome`, `get_webhook_url`. A refusal is
 * thrown as a HooklineError (the workflow sees ValueError, or the store's own Python error).
 * @example const sdk = new SdkService(deps); createHost({ ...parts, sdk: sdk.forSession(session) });
 */
export class SdkService {
  #d: SdkDeps;
  readonly signals: SignalQueues;
  #off: () => void = () => {};

  constructor(deps: SdkDeps) {
    this.#d = deps;
    this.signals = new SignalQueues(deps.clock);
    const { cluster } = deps;
    if (cluster.shared) {
      this.#off = cluster.bus.subscribe("signals", (m) => {
        const { origin, session_id, signal } = m as {
          origin: string;
          session_id: string;
          signal: SignalMessage;
        };
        if (origin !== cluster.instanceId) this.#deliverHere(session_id, signal);
      });
    }
  }

  /** What a session's host calls for its SDK requests. */
  forSession(
    s: SdkSession,
  ): (kind: SdkRequestKind, fields: Record<string, unknown>) => Promise<unknown> {
    return (kind, fields) => this.#serve(s, kind, fields);
  }

  /**
   * Sends `signal` to session `id` as session `from` would with `signal()` (the end of a child
   * session, src/sessions/child-end.ts); refusals are thrown as for `signal()`.
   */
  signalFrom(from: SessionRecord, id: string, signal: SignalMessage): Promise<void> {
    return this.#signal(from, id, signal);
  }

  /** The session ended or left this instance: its signal queue goes. */
  closed(id: string): void {
    this.signals.close(id);
  }

  dispose(): void {
    this.#off();
    this.#off = () => {};
  }

  async #serve(s: SdkSession, kind: SdkRequestKind, fields: Record<string, unknown>) {
    const { record, doc } = s;
    switch (kind) {
      case "store":
      case "webhook_url":
        return handleSdkRequest(kind, fields, {
          kv: this.#d.kv,
          projectId: record.project_id,
          publicBaseUrl: this.#d.publicUrl(),
          triggers: doc.triggers,
        });
      case "outcome_value":
        record.outcome_value = parse(kind, OutcomeValueFields, fields).value;
        s.persist();
        return null;
      case "start_session":
        return this.#start(s, parse("start", StartFields, fields));
      case "signal": {
        const f = parse(kind, SignalFields, fields);
        await this.#signal(record, f.session_id, { name: f.name, payload: f.payload });
        return null;
      }
      case "next_signal": {
        const f = parse(kind, NextSignalFields, fields);
        const timeoutMs = f.timeout === null ? null : f.timeout * 1000;
        const waiting = this.signals.next(record.id, f.names, timeoutMs);
        s.parking.watch(s.parkable, waiting, timeoutMs ?? Number.POSITIVE_INFINITY);
        return waiting;
      }
    }
  }

  async #start(s: SdkSession, f: StartFields): Promise<string> {
    checkProject(f.project, s.doc);
    checkLoc(f.loc, await this.#d.builds.get(s.record.build_id));
    const { session } = await this.#d.ingest(childStart(s.record, s.doc, f, isoNow(this.#d.clock)));
    return session!.id;
  }

  async #signal(from: SessionRecord, id: string, signal: SignalMessage): Promise<void> {
    const here = this.#d.live(id);
    const target = here?.record ?? (await this.#d.stores.sessions.get(id));
    if (!target || target.project_id !== from.project_id) {
      throw new HooklineError("not_found", `signal: no session "${id}" in this project`);
    }
    if (ENDED.has(target.state)) {
      throw new HooklineError("bad_request", `signal: session "${id}" has ended (${target.state})`);
    }
    if (here) return this.signals.push(id, signal);
    const { cluster } = this.#d;
    if (!cluster.shared) {
      throw new HooklineError(
        "conflict",
        `signal: session "${id}" is not running on this service now (it resumes at the next start)`,
      );
    }
    // Its owner queues it; a full queue there drops it with a warning in that session's log.
    cluster.bus.publish("signals", { origin: cluster.instanceId, session_id: id, signal });
  }

  #deliverHere(id: string, signal: SignalMessage): void {
    const here = this.#d.live(id);
    if (!here) return; // not ours
    try {
      this.signals.push(id, signal);
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      here.log.append({ t: isoNow(this.#d.clock), kind: "warning", text });
    }
  }
}
