import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { isoNow } from "../../src/clock.ts";
import type { Cluster } from "../../src/cluster/cluster.ts";
import { silentLogger } from "../../src/log.ts";
import type { EventRecord, HandlerEvent, ProjectDoc } from "../../src/model/records.ts";
import { createSecretBox } from "../../src/secrets.ts";
import type { FrontCounters } from "../../src/sessions/context.ts";
import { type Ingested, SessionManager } from "../../src/sessions/manager.ts";
import type { Parking } from "../../src/sessions/parking.ts";
import { newSessionRecord } from "../../src/sessions/session-record.ts";
import { createStores } from "../../src/storage/records.ts";
import { storedJson } from "../../src/storage/stored-json.ts";
import { manualClock } from "./clock.ts";
import { type FakeHandler, fakeRuntime } from "./fake-runtime.ts";
import { eventRecord, T, triggerRecord } from "./records.ts";

const trigger = triggerRecord;

/**
 * A session manager over memory storage, the fake runtime and a hand-driven clock, with one
 * project whose triggers are named after `handlers` (`handlers.py:<name>`; a name starting with
 * `durable` makes a durable trigger, `sync` a sync one) plus a call-less trigger `source`.
 * @example const f = await sessionsFixture({ on_post: () => {} }); f.start("on_post");
 */
export async function sessionsFixture(
  handlers: Record<string, FakeHandler>,
  opts: {
    evictAfterMs?: number;
    cluster?: Cluster;
    maxActive?: number;
    /** A front door's counters, and how long its hand-overs wait out a burst (`burstYieldMs`). */
    front?: { counters: FrontCounters; burstYieldMs: number };
  } = {},
) {
  const stores = createStores(createStorage({ driver: memory() }));
  const clock = manualClock();
  const fake = fakeRuntime(
    Object.fromEntries(Object.entries(handlers).map(([k, v]) => [`handlers.py:${k}`, v])),
  );
  const doc: ProjectDoc = {
    project: {
      id: "prj_1",
      name: "demo",
      env_id: "env_1",
      active_deployment_id: "dep_1",
      created_at: T,
      updated_at: T,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T },
    triggers: [
      ...Object.keys(handlers).map((name) =>
        trigger(name, { is_durable: name.startsWith("durable"), is_sync: name.startsWith("sync") }),
      ),
      trigger("source", { call: null }),
    ],
    vars: [],
  };
  await stores.projects.put(doc);
  await stores.builds.put({ id: "bld_1", project_id: "prj_1", files: {}, size: 0, created_at: T });
  /** Another manager on the same storage (a next start); on another runtime, given one. */
  const make = (runtime = fake.runtime) =>
    new SessionManager({
      deps: {
        stores,
        runtime,
        secrets: createSecretBox(randomBytes(32)),
        log: silentLogger,
        cluster: opts.cluster,
        clock,
        front: opts.front?.counters,
      },
      limits: {
        workflowTimeoutMs: 10_000,
        maxActive: opts.maxActive ?? 100,
        evictAfterMs: opts.evictAfterMs ?? -1,
        burstYieldMs: opts.front?.burstYieldMs,
      },
    });
  const manager = make();
  let n = 0;
  const eventFor = (name: string, body: string): EventRecord =>
    eventRecord({
      id: `evt_${++n}`,
      project_id: "prj_1",
      trigger_id: `trg_${name}`,
      trigger_name: name,
      webhook_id: `wh_${name}`,
      data: {
        method: "POST",
        raw_url: "/",
        url: { path: "/", query: {}, path_suffix: "" },
        headers: {},
        body: { bytes: Buffer.from(body).toString("base64"), text: body, json: null, form: null },
      },
    });
  /**
   * Stores an event for trigger `name` and starts its session; resolves with what `ingest`
   * gave: the session and, for a sync trigger, the wait a held request would make.
   */
  async function ingestFor(name: string, body = "hi") {
    const event = eventFor(name, body);
    const trg = doc.triggers.find((t) => t.name === name)!;
    // The stored event starts its session here (as a re-run does); the event names it.
    const prepared = manager.prepare({
      source: { kind: "rerun", trigger: trg },
      doc,
      deployment: { id: "dep_1", buildId: "bld_1" },
      events: [{ stored: event }],
    });
    event.session_id = prepared.sessionId;
    await stores.events.put(event);
    const [{ session, outcome }] = (await prepared.run()) as [Ingested];
    return { session: session!, outcome };
  }
  /**
   * A session of trigger `name` as the front door's thread takes one: its event and `created`
   * record in one commit, then handed over to the manager to run. Resolves with the record.
   */
  async function handOver(name: string, body = "hi") {
    const event = eventFor(name, body);
    const trigger = doc.triggers.find((t) => t.name === name)!;
    const input = { doc, trigger, deploymentId: "dep_1", buildId: "bld_1", event };
    const record = newSessionRecord({ ...input, sessionId: `ses_${n}` }, isoNow(clock));
    event.session_id = record.id;
    const texts = { record: storedJson(record), event: storedJson(event) };
    await stores.sessions.commit(record.id, { record, was: null, event, texts });
    manager.front.adopt(record, texts.event);
    return record;
  }
  /** Stores an event for trigger `name` and starts its session. */
  async function start(name: string, body = "hi") {
    return (await ingestFor(name, body)).session;
  }
  /**
   * Starts a session of the sync trigger `name` as a held request does: resolves with the
   * session and its wait (the first final outcome, the session's end, or a timeout).
   */
  async function startHeld(name: string, body = "hi") {
    const { session, outcome } = await ingestFor(name, body);
    if (!outcome) throw new Error(`trigger "${name}" is not sync: no request is held`);
    return { session, outcome };
  }
  /**
   * A webhook event of the call-less trigger `source`, through the one way in (ingest): stored,
   * and handed to the subscribers of `prj_1:source`, here and (with a cluster) everywhere.
   * Resolves with the event as a subscriber gets it.
   */
  async function publish(eventId: string, data: EventRecord["data"]): Promise<HandlerEvent> {
    const trg = doc.triggers.find((t) => t.name === "source")!;
    const stored: EventRecord = {
      id: eventId,
      project_id: "prj_1",
      trigger_id: trg.id,
      trigger_name: trg.name,
      webhook_id: "",
      event_type: "post",
      data,
      session_id: null,
      created_at: new Date(clock.now()).toISOString(),
    };
    // Stored with the fixture's id, then the one way in hands it to the subscribers.
    await stores.events.put(stored);
    const { event } = await manager.ingest({
      source: { kind: "webhook", trigger: trg },
      doc,
      deployment: { id: "dep_1", buildId: "bld_1" },
      event: { stored },
    });
    const { id, session_id, event_type } = event;
    return { event_id: id, session_id, event_type, data: event.data };
  }
  /**
   * Holds every session write (`stores.sessions.commit` and `commitMany`) until the returned
   * release is called, so that a test sees what waits for a session's writes and what does not.
   */
  function holdWrites(): () => void {
    const { commit, commitMany } = stores.sessions;
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    stores.sessions.commit = async (...args) => {
      await held;
      return commit(...args);
    };
    stores.sessions.commitMany = async (...args) => {
      await held;
      return commitMany(...args);
    };
    return () => {
      Object.assign(stores.sessions, { commit, commitMany });
      release();
    };
  }
  return {
    stores,
    clock,
    fake,
    doc,
    manager,
    make,
    start,
    startHeld,
    handOver,
    publish,
    holdWrites,
  };
}

/** Whether `parking` holds the session parked (its process released, its wait not over). */
export function isParked(parking: Parking, id: string): boolean {
  return parking.woken(id) !== null;
}
