import { HooklineError, isHooklineError } from "../../errors.ts";
import type { JournalStep } from "../../model/records.ts";
import type { SessionHost } from "../runtime.ts";
import type { RequestMessage } from "./protocol.ts";

/** A request served: the reply's value, and the step a durable session journals before replying. */
export interface Served {
  value: unknown;
  step: JournalStep;
}

/**
 * Asks the host for what a `subscribe`, `next_event` or `unsubscribe` message wants.
 * @example const { value } = await serve(host, { type: "unsubscribe", req: 1, id: "sub_1" }, 4);
 */
export async function serve(host: SessionHost, m: RequestMessage, seq: number): Promise<Served> {
  switch (m.type) {
    case "subscribe": {
      const id = await host.subscribe(m.name, m.filter);
      return {
        value: id,
        step: { seq, kind: "subscribe", name: m.name, filter: m.filter, value: id },
      };
    }
    case "next_event": {
      const event = await host.nextEvent(m.ids, m.timeout === null ? null : m.timeout * 1000);
      return { value: event, step: { seq, kind: "next_event", value: event } };
    }
    case "unsubscribe":
      await host.unsubscribe(m.id);
      return { value: null, step: { seq, kind: "unsubscribe", id: m.id } };
    case "sleep":
      await host.sleep(seq, m.seconds * 1000);
      return { value: null, step: { seq, kind: "sleep" } };
    default:
      throw new HooklineError(
        "unprocessable",
        `${m.type}: this SDK call is not served by this service yet`,
      );
  }
}

/**
 * A request that failed, as a durable session journals it: replay raises the same error again
 * (python-runtime reads `error` and `message` from a journaled request step).
 */
export type FailedStep = JournalStep & { error: string; message: string };

export function failedStep(
  m: RequestMessage,
  seq: number,
  error: string,
  message: string,
): FailedStep {
  switch (m.type) {
    case "subscribe":
      return { seq, kind: "subscribe", name: m.name, filter: m.filter, error, message };
    case "next_event":
      return { seq, kind: "next_event", value: null, error, message };
    case "unsubscribe":
      return { seq, kind: "unsubscribe", id: m.id, error, message };
    case "sleep":
      return { seq, kind: "sleep", error, message };
    default:
      return { seq, kind: m.type, error, message };
  }
}

/** Host errors of these codes reach Python as `ValueError`. */
const VALUE_ERROR_CODES = new Set(["bad_request", "unprocessable", "not_found", "conflict"]);

/**
 * The failed reply for a host error: `ValueError` for the caller's mistakes (a HooklineError
 * coded bad_request, unprocessable, not_found, conflict), `TimeoutError` for gateway_timeout,
 * else `RuntimeError`; the message is the error's.
 */
export function failedReply(req: number, e: unknown) {
  let error = "RuntimeError";
  if (isHooklineError(e) && VALUE_ERROR_CODES.has(e.code)) error = "ValueError";
  else if (isHooklineError(e) && e.code === "gateway_timeout") error = "TimeoutError";
  const message = e instanceof Error ? e.message : String(e);
  return { type: "reply", req, ok: false, error, message };
}
