import { HooklineError } from "../../src/errors.ts";
import type {
  ActivityReport,
  HandlerEvent,
  JournalStep,
  Outcome,
} from "../../src/model/records.ts";
import type { ActivityStart } from "../../src/model/run-records.ts";
import type { SessionHost, SessionSpec, StepRequest } from "../../src/runtime/runtime.ts";
import { SessionJournal } from "../../src/sessions/journal.ts";
import { serveRetry } from "../../src/sessions/retries.ts";
import { serveStep } from "../../src/sessions/steps.ts";

/**
 * A SessionHost that records what a session did, for tests. Steps are numbered, journaled and
 * replayed by the core's own journal (src/sessions); only the live answers are scripted.
 */
export interface RecordingHost extends SessionHost {
  prints: Array<{ text: string; stream: "stdout" | "stderr" }>;
  activities: ActivityReport[];
  /** Activities told as they started (live only), in order. */
  activityStarts: ActivityStart[];
  outcomes: Outcome[];
  /** The steps the journal stored, in the order they were stored. */
  journaled: JournalStep[];
  /** Every step request the runtime sent, as sent. */
  requests: StepRequest[];
  /** The live calls served (replayed steps are not), one line each. */
  calls: string[];
  /** How many times the session said its process started. */
  starts: number;
  /** Events handed out by next_event, in order; null entries answer "timed out". */
  events: Array<HandlerEvent | null>;
  /** When set, storing a journal step fails with it. */
  journalError?: Error;
}

/**
 * A recording host for one run of a session: `durable` and `journal` as in its spec.
 * @example const host = recordingHost({ durable: true }); runtime.run(testSpec({ durable: true }), build, host);
 */
export function recordingHost(
  session: Pick<SessionSpec, "durable" | "journal"> = { durable: false, journal: [] },
): RecordingHost {
  let subs = 0;
  const journal = new SessionJournal({
    durable: session.durable,
    steps: session.journal,
    store: async (step) => {
      if (host.journalError) throw host.journalError;
      host.journaled.push(step);
    },
  });
  journal.begin();
  const live = (req: StepRequest, seq: number): unknown => {
    switch (req.kind) {
      case "subscribe":
        host.calls.push(`subscribe ${req.name} ${req.filter}`);
        if (req.name !== "hook") {
          throw new HooklineError("bad_request", `unknown source "${req.name}"`);
        }
        subs++;
        return `sub_${subs}`;
      case "next_event":
        host.calls.push(`next_event ${req.ids.join(",")} ${req.timeoutMs}`);
        if (host.events.length === 0) throw new Error("no events left");
        return host.events.shift() ?? null;
      case "unsubscribe":
        host.calls.push(`unsubscribe ${req.id}`);
        return null;
      case "sleep":
        host.calls.push(`sleep ${seq} ${req.ms}`);
        return null;
      case "outcome":
        host.outcomes.push(req.outcome);
        return null;
      case "activity":
      case "retry":
        return null;
      default: // the SDK's requests: recorded, answered with their kind
        host.calls.push(`${req.kind} ${JSON.stringify(req.fields)}`);
        return { kind: req.kind };
    }
  };
  const host: RecordingHost = {
    prints: [],
    activities: [],
    activityStarts: [],
    outcomes: [],
    journaled: [],
    requests: [],
    calls: [],
    starts: 0,
    events: [],
    started() {
      host.starts++;
    },
    print(text, stream) {
      host.prints.push({ text, stream });
    },
    activityStarted(start) {
      host.activityStarts.push(start);
    },
    activity(report) {
      host.activities.push(report);
    },
    step(request) {
      host.requests.push(request);
      // A retry's wait is not the runtime's to test: its deadline passes at once.
      if (request.kind === "retry") return serveRetry(journal, request, Date.now(), async () => {});
      return serveStep(journal, request, live);
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
