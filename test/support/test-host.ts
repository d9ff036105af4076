import { HooklineError } from "../../src/errors.ts";
import type {
  ActivityReport,
  HandlerEvent,
  JournalStep,
  Outcome,
} from "../../src/model/records.ts";
import type { SessionHost, SessionSpec } from "../../src/runtime/runtime.ts";

/** A SessionHost that records what a session did, for tests. Not used by the service. */
export interface RecordingHost extends SessionHost {
  prints: Array<{ text: string; stream: "stdout" | "stderr" }>;
  activities: ActivityReport[];
  outcomes: Outcome[];
  journaled: JournalStep[];
  calls: string[];
  /** How many times the session said its process started. */
  starts: number;
  /** Events handed out by nextEvent, in order; null entries answer "timed out". */
  events: Array<HandlerEvent | null>;
  /** When set, journal() rejects with it. */
  journalError?: Error;
}

export function recordingHost(): RecordingHost {
  let subs = 0;
  const host: RecordingHost = {
    prints: [],
    activities: [],
    outcomes: [],
    journaled: [],
    calls: [],
    starts: 0,
    events: [],
    print(text, stream) {
      host.prints.push({ text, stream });
    },
    activity(report) {
      host.activities.push(report);
    },
    outcome(outcome) {
      host.outcomes.push(outcome);
    },
    async subscribe(name, filter) {
      host.calls.push(`subscribe ${name} ${filter}`);
      if (name !== "hook") throw new HooklineError("bad_request", `unknown source "${name}"`);
      subs++;
      return `sub_${subs}`;
    },
    async nextEvent(ids, timeoutMs) {
      host.calls.push(`next_event ${ids.join(",")} ${timeoutMs}`);
      if (host.events.length === 0) throw new Error("no events left");
      return host.events.shift() ?? null;
    },
    started() {
      host.starts++;
    },
    async unsubscribe(id) {
      host.calls.push(`unsubscribe ${id}`);
    },
    async sleep(seq, ms) {
      host.calls.push(`sleep ${seq} ${ms}`);
    },
    async journal(step) {
      if (host.journalError) throw host.journalError;
      host.journaled.push(step);
    },
  };
  return host;
}

export function testEvent(body = "hello"): HandlerEvent {
  return {
    event_id: "evt_01",
    session_id: "ses_01",
    event_type: "post",
    data: {
      method: "POST",
      raw_url: "/webhooks/abc",
      url: { path: "/webhooks/abc", query: {}, path_suffix: "" },
      headers: { "Content-Type": "text/plain" },
      body: { bytes: Buffer.from(body).toString("base64"), text: body, json: null, form: null },
    },
  };
}

export function testSpec(over: Partial<SessionSpec> = {}): SessionSpec {
  return {
    sessionId: "ses_01",
    projectId: "prj_01",
    buildId: "bld_01",
    entry: "handlers.py:on_post",
    event: testEvent(),
    env: { GREETING: "hi" },
    durable: false,
    journal: [],
    workflowTimeoutMs: 10_000,
    ...over,
  };
}
