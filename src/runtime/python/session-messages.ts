import type { SessionHost, StepReply, StepRequest } from "../runtime.ts";
import type { PartsInbox } from "./parts.ts";
import type { FromPython } from "./protocol.ts";
import {
  toActivityReport,
  toActivityStep,
  toOutcomeStep,
  toReplyMessage,
  toStepRequest,
} from "./requests.ts";

type Message<T extends FromPython["type"]> = Extract<FromPython, { type: T }>;

/** What a message acts on: the session's host, and the socket the session runs over. */
export interface MessageTarget {
  host: SessionHost;
  /** Whether the session is durable: only a durable one may send `step`. */
  durable: boolean;
  /** Writes one message to the process (nothing once the session has ended). */
  send(message: unknown): void;
  /** Ends the session in error, with no grace. */
  fail(message: string): void;
  /** The process said who it is; returns why that breaks the protocol, if it does. */
  hello(pid: number): string | undefined;
  /** The process ended the session. */
  done(m: Message<"done">): void;
  /** Parts of values too big for one message, until their step (parts.ts). */
  parts: PartsInbox;
}

/**
 * What one message from a session's process means: a host call, and the reply or ack it gets
 * once the host has answered (the host numbers and journals steps). Returns why the message
 * breaks the protocol, if it does; the socket checks what comes before `hello`.
 * @example const violation = actOn({ type: "print", text: "hi", stream: "stdout" }, target);
 */
export function actOn(m: FromPython, to: MessageTarget): string | undefined {
  switch (m.type) {
    case "hello":
      return to.hello(m.pid);
    case "print":
      to.host.print(m.text, m.stream, m.outside);
      return undefined;
    case "activity_started":
      to.host.activityStarted?.({ id: m.id, function: m.function, running_ms: m.running_ms ?? 0 });
      return undefined;
    case "activity":
      to.host.activity(toActivityReport(m));
      return undefined;
    case "outcome":
      // Fire and forget for Python; the host numbers and (durable) journals it.
      forward(to, toOutcomeStep(m), () => {});
      return undefined;
    case "subscribe":
    case "next_event":
    case "unsubscribe":
    case "sleep":
    case "store":
    case "start_session":
    case "signal":
    case "next_signal":
    case "outcome_value":
    case "webhook_url":
    case "encode_jwt":
    case "refresh_oauth":
    case "replay_activity":
    case "retry":
      forward(to, toStepRequest(m), (reply) => {
        // A replayed value kept apart goes first, in parts, as it came (parts.ts).
        if (reply.ok)
          for (const data of reply.parts ?? []) to.send({ type: "replay_part", seq: m.seq, data });
        to.send(toReplyMessage(m.req, reply));
      });
      return undefined;
    case "part":
      if (!to.durable) return '"part" in a non-durable session';
      return to.parts.add(m.seq, m.data);
    case "step":
      return step(m, to);
    case "done":
      to.done(m);
      return undefined;
  }
}

/** A durable activity's step, with its parts when its value came apart. */
function step(m: Message<"step">, to: MessageTarget): string | undefined {
  if (!to.durable) return '"step" in a non-durable session';
  let parts: string[] | undefined;
  if (m.apart) {
    const taken = to.parts.take(m.seq, m.apart);
    if ("violation" in taken) return taken.violation;
    parts = taken.parts;
  }
  // Python waits for the ack: the result is on record before the handler sees it.
  forward(to, toActivityStep(m, parts), () => to.send({ type: "ack", seq: m.seq }));
  return undefined;
}

/** Hands a step to the host; a rejection (not stored, against the journal) ends it in error. */
function forward(to: MessageTarget, request: StepRequest, onReply: (r: StepReply) => void): void {
  let answer: Promise<StepReply>;
  try {
    answer = to.host.step(request);
  } catch (e) {
    answer = Promise.reject(e);
  }
  answer.then(onReply, (e: unknown) => to.fail(errorText(e)));
}

/**
 * An error's message, or the thrown value as text.
 * @example errorText(new Error("no")) // "no"
 */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
