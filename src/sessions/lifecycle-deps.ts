import type { Clock } from "../clock.ts";
import type { Subscriptions } from "../events/subscriptions.ts";
import type { Logger } from "../log.ts";
import type { SessionEnd, SessionRecord } from "../model/records.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import type { Stores } from "../storage/stores.ts";
import type { EventHistory } from "./backfill.ts";
import type { buildCache } from "./build-cache.ts";
import type { Outcomes } from "./outcomes.ts";
import type { Parking } from "./parking.ts";
import type { SdkService } from "./sdk.ts";
import type { SessionWriter } from "./writer.ts";

// What the lifecycle (lifecycle.ts) is made of and what it tells its listeners.

/**
 * What happened to a session here: it `started`; it `ended` (record final); or it `left`
 * (the service stops, a durable session stays `running` for the next start to resume).
 * `written` resolves once its record and log are in storage.
 */
export interface LifecycleEvent {
  type: "started" | "ended" | "left";
  record: SessionRecord;
  written: Promise<void>;
  /** "ended": how the run ended (a completed one carries the handler's return value). */
  end?: SessionEnd;
}

export interface LifecycleDeps {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
  log: Logger;
  clock: Clock;
  writer: SessionWriter;
  outcomes: Outcomes;
  parking: Parking;
  subscriptions: Subscriptions;
  builds: ReturnType<typeof buildCache>;
  workflowTimeoutMs: number;
  /** Sessions alive at once (running or waiting for a slot); past it `start` refuses. */
  maxActive: number;
  /** Webhook events published since a time, on every instance (see backfill.ts); absent: none. */
  history?: EventHistory;
  /** Answers the SDK's requests (store, start, signals, …); absent: they are refused. */
  sdk?: SdkService;
}
