import type { Logger } from "../log.ts";
import type { SessionEnd, SessionRecord } from "../model/records.ts";
import { MAX_SIGNAL_PAYLOAD, type SdkService } from "./sdk.ts";
import type { SignalMessage } from "./signals.ts";

/**
 * The signal a session made by `start()` sends its parent when it ends, as AutoKitteh does:
 * named by the child's session id, payload `{'completed': True, 'value': <return value>}`, or
 * `{'completed': False}` when it failed or was stopped. The payload is in the SDK's wire form (a
 * dict of str keys is a JSON object); a return value over the signal limit arrives as None.
 * @example childEndSignal(child, { state: "completed", value: 2 }) // { name: child.id, payload: { completed: true, value: 2 } }
 */
export function childEndSignal(child: SessionRecord, end: SessionEnd | undefined): SignalMessage {
  if (end?.state !== "completed") return { name: child.id, payload: { completed: false } };
  const value = end.value ?? null;
  const fits = Buffer.byteLength(JSON.stringify(value)) <= MAX_SIGNAL_PAYLOAD - 64;
  return { name: child.id, payload: { completed: true, value: fits ? value : null } };
}

/**
 * Sends the ended child's signal to its parent. A parent that has ended, or that runs nowhere,
 * no longer waits for it: the refusal is logged at debug level and changes nothing.
 * @example channel.listen((e) => e.type === "ended" && signalParent(sdk, e.record, e.end, log));
 */
export function signalParent(
  sdk: SdkService,
  child: SessionRecord,
  end: SessionEnd | undefined,
  log: Logger,
): void {
  if (!child.parent_id) return;
  sdk.signalFrom(child, child.parent_id, childEndSignal(child, end)).catch((e: unknown) => {
    log.info(`session ${child.id}: its parent ${child.parent_id} was not signalled: ${String(e)}`);
  });
}
