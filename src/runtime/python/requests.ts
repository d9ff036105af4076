import type { StepReply, StepRequest } from "../runtime.ts";
import type { RequestMessage } from "./protocol.ts";

/**
 * The step a request message (`subscribe`, `next_event`, `unsubscribe`, `sleep`, the SDK's) asks of the host, with
 * the child's seq when it sent one (durable sessions): translation only, the host numbers and
 * journals the step.
 * @example toStepRequest({ type: "sleep", req: 1, seconds: 2, seq: 4 }) // { kind: "sleep", ms: 2000, seq: 4 }
 */
export function toStepRequest(m: RequestMessage): StepRequest {
  const seq = m.seq === undefined ? {} : { seq: m.seq };
  switch (m.type) {
    case "subscribe":
      return { kind: "subscribe", name: m.name, filter: m.filter, ...seq };
    case "next_event":
      return {
        kind: "next_event",
        ids: m.ids,
        timeoutMs: m.timeout === null ? null : m.timeout * 1000,
        ...seq,
      };
    case "unsubscribe":
      return { kind: "unsubscribe", id: m.id, ...seq };
    case "sleep":
      return { kind: "sleep", ms: m.seconds * 1000, ...seq };
    case "replay_activity":
      // No result: the host answers it from the journal, never runs it (steps.ts).
      return { kind: "activity", seq: m.seq, function: m.function };
    default: {
      const { type, req: _req, seq: _seq, ...fields } = m;
      return { kind: type, fields, ...seq };
    }
  }
}

/**
 * The `reply` message for the host's answer to request `req`: a refusal carries the name of the
 * exception Python raises and its message.
 * @example toReplyMessage(3, { ok: true, value: "sub_1" }) // { type: "reply", req: 3, ok: true, value: "sub_1" }
 */
export function toReplyMessage(req: number, reply: StepReply) {
  return reply.ok
    ? { type: "reply", req, ok: true, value: reply.value ?? null }
    : { type: "reply", req, ok: false, error: reply.error, message: reply.message };
}
