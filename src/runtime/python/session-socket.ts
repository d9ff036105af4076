import type { Duplex } from "node:stream";
import type { SessionEnd } from "../../model/records.ts";
import type { SessionHost, SessionRun, SessionSpec, StepReply, StepRequest } from "../runtime.ts";
import { encodeLine, LineSplitter } from "./ndjson.ts";
import { type FromPython, parseMessage } from "./protocol.ts";
import {
  toActivityReport,
  toActivityStep,
  toOutcomeStep,
  toReplyMessage,
  toSessionEnd,
  toStartMessage,
  toStepRequest,
} from "./requests.ts";

export interface SocketOptions {
  /** Longest line accepted from Python; longer ends the session. Default 8 MiB. */
  maxLineBytes?: number;
  /** How long a stopped (or finished) process may take to close its socket before SIGKILL. */
  stopGraceMs?: number;
  /** How long the process may take to say `hello`. */
  helloTimeoutMs?: number;
  /**
   * How the process ended when it died without `done` (its fork server reports it), or null
   * when that is not known: the session's end then names its signal or exit code.
   */
  exitEnd?: (pid: number) => Promise<SessionEnd | null>;
  /** Kills the session's process; tests replace it. */
  kill?: (pid: number) => void;
  /** Whether `hello` tells the host the process started; false when a retry's first try did. */
  announceStart?: boolean;
  /** A reused process's pid: it said `hello` for an earlier session, so `start` goes at once. */
  greeted?: number;
  /** The process may stay after this session (`start` says `reuse: true`; see reuse.ts). */
  reuse?: boolean;
}

export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/**
 * One session over one socket: sends `start`, translates the process's messages into host
 * calls and the host's answers into replies and acks (the host numbers and journals steps),
 * and ends in exactly one `SessionEnd` once the socket has closed.
 * @example const run = new SessionSocket(socket, spec, "/data/builds/bld_1", host); await run.done;
 */
export class SessionSocket implements SessionRun {
  readonly done: Promise<SessionEnd>;
  readonly #socket: Duplex;
  readonly #spec: SessionSpec;
  readonly #projectDir: string;
  readonly #host: SessionHost;
  readonly #grace: number;
  readonly #kill: (pid: number) => void;
  #pid: number | null = null;
  #end: SessionEnd | null = null;
  #closed = false;
  #shutdown: NodeJS.Timeout | null = null;
  #helloTimer: NodeJS.Timeout | null;
  #heard = false;
  readonly #announceStart: boolean;
  readonly #reuse: boolean;
  readonly #splitter: LineSplitter;
  readonly #listeners: Record<"close" | "data" | "error", (chunk: Buffer) => void>;
  readonly #settle: (end: SessionEnd) => void;
  /** `done` said the process stays: the socket went back to the caller, and lines after it. */
  #released = false;
  #after = false;
  slowImport = false; // `done` said importing the project anew was slow (reuse.ts `slowImport`)

  constructor(
    socket: Duplex,
    spec: SessionSpec,
    projectDir: string,
    host: SessionHost,
    options: SocketOptions = {},
  ) {
    this.#socket = socket;
    this.#spec = spec;
    this.#projectDir = projectDir;
    this.#host = host;
    this.#grace = options.stopGraceMs ?? 2000;
    this.#kill = options.kill ?? ((pid) => process.kill(pid, "SIGKILL"));
    this.#announceStart = options.announceStart ?? true;
    this.#reuse = options.reuse ?? false;
    const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
    const tooLong = () => this.#fail(`a message from Python is longer than ${maxLine} bytes`);
    const splitter = new LineSplitter(maxLine, (line) => this.#onLine(line), tooLong);
    this.#splitter = splitter;
    let resolve: (end: SessionEnd) => void = () => {};
    this.done = new Promise((r) => {
      resolve = r;
    });
    this.#settle = resolve;
    const close = () => {
      this.#closed = true;
      this.#clearTimers();
      if (this.#end !== null) return resolve(this.#end);
      const pid = this.#pid;
      const unknown: SessionEnd = {
        state: "crashed",
        message: `the Python process${pid === null ? "" : ` ${pid}`} exited before the session finished`,
      };
      if (pid === null || !options.exitEnd) return resolve(unknown);
      options.exitEnd(pid).then(
        (end) => resolve(end ?? unknown),
        () => resolve(unknown),
      );
    };
    const data = (chunk: Buffer) => {
      if (this.#end === null) splitter.push(chunk);
    };
    // A reset or EPIPE is followed by "close", which decides the outcome.
    this.#listeners = { close, data, error: () => {} };
    for (const [event, listener] of Object.entries(this.#listeners)) socket.on(event, listener);
    // A socket connected ahead of time comes paused, with what it read put back.
    socket.resume();
    this.#helloTimer =
      options.greeted === undefined
        ? setTimeout(
            () => this.#fail("the Python process did not start in time"),
            options.helloTimeoutMs ?? 30_000,
          )
        : null;
    if (options.greeted !== undefined) this.#begin(options.greeted);
  }

  /**
   * The process ended the session with `done` and stays for another (reuse.ts): its socket,
   * paused, is the caller's; false when it did not, or sent anything after `done`.
   */
  get reusable(): boolean {
    return this.#released && !this.#after && this.#splitter.pendingBytes === 0;
  }

  /** Sends `stop`, waits for the grace period, then kills the process. Idempotent. */
  async stop(): Promise<void> {
    this.#finish({ state: "stopped" }, this.#grace);
    await this.done;
  }

  /** The process id from `hello`, once known. */
  get pid(): number | null {
    return this.#pid;
  }

  /** Whether the process said anything after `hello` (a spare that died with its server did not). */
  get heard(): boolean {
    return this.#heard;
  }

  #onLine(line: string): void {
    if (this.#end !== null) {
      if (this.#released) this.#after = true;
      return;
    }
    const parsed = parseMessage(line);
    let violation: string | undefined;
    try {
      violation = parsed.ok ? this.#dispatch(parsed.message) : parsed.reason;
    } catch (e) {
      const type = parsed.ok ? parsed.message.type : "?";
      this.#fail(`the service failed handling "${type}": ${errorText(e)}`);
      return;
    }
    if (violation !== undefined) this.#fail(`bad message from Python: ${violation}`);
  }

  /** Acts on one message; returns why it breaks the protocol, if it does. */
  #dispatch(m: FromPython): string | undefined {
    if (this.#pid === null && m.type !== "hello") return `"${m.type}" before "hello"`;
    if (m.type !== "hello") this.#heard = true;
    switch (m.type) {
      case "hello":
        return this.#onHello(m.pid);
      case "print":
        this.#host.print(m.text, m.stream);
        return undefined;
      case "activity":
        this.#host.activity(toActivityReport(m));
        return undefined;
      case "outcome":
        // Fire and forget for Python; the host numbers and (durable) journals it.
        this.#forward(toOutcomeStep(m), () => {});
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
      case "refresh_oauth":
      case "replay_activity":
      case "retry":
        this.#forward(toStepRequest(m), (reply) => this.#send(toReplyMessage(m.req, reply)));
        return undefined;
      case "step":
        if (!this.#spec.durable) return '"step" in a non-durable session';
        // Python waits for the ack: the result is on record before the handler sees it.
        this.#forward(toActivityStep(m), () => this.#send({ type: "ack", seq: m.seq }));
        return undefined;
      case "done":
        this.slowImport = m.slow_import === true;
        if (m.reuse === true && this.#reuse) this.#release(toSessionEnd(m));
        // It exits by itself after `done`: a `stop` would only meet a closed socket.
        else this.#finish(toSessionEnd(m), this.#grace, false);
        return undefined;
    }
  }

  /** The process said who it is: the session starts (a second `hello` breaks the protocol). */
  #onHello(pid: number): string | undefined {
    if (this.#pid !== null) return 'a second "hello"';
    this.#begin(pid);
    return undefined;
  }

  #begin(pid: number): void {
    this.#pid = pid;
    if (this.#helloTimer) clearTimeout(this.#helloTimer);
    this.#helloTimer = null;
    const start = () => this.#send(toStartMessage(this.#spec, this.#projectDir, this.#reuse));
    // The host may want the session on record as running before its code begins.
    const ready = this.#announceStart ? this.#host.started() : undefined;
    if (ready) void ready.then(start, start);
    else start();
  }

  /** The session ended and its process stays: the socket is the caller's from now on. */
  #release(end: SessionEnd): void {
    this.#end = end;
    this.#released = this.#closed = true; // nothing more is sent from here
    this.#clearTimers();
    this.#socket.pause();
    for (const [event, listener] of Object.entries(this.#listeners)) {
      this.#socket.off(event, listener);
    }
    this.#settle(end);
  }

  /** Hands a step to the host; a rejection (not stored, against the journal) ends it in error. */
  #forward(request: StepRequest, onReply: (reply: StepReply) => void): void {
    let answer: Promise<StepReply>;
    try {
      answer = this.#host.step(request);
    } catch (e) {
      answer = Promise.reject(e);
    }
    answer.then(onReply, (e: unknown) => this.#fail(errorText(e)));
  }

  #send(message: unknown): void {
    if (this.#end !== null && (message as { type?: string }).type !== "stop") return;
    if (this.#closed || this.#socket.destroyed || !this.#socket.writable) return;
    this.#socket.write(encodeLine(message));
  }

  /** Ends the session because of a broken protocol or a failed host call: no grace. */
  #fail(message: string): void {
    this.#finish({ state: "error", message }, 0);
  }

  /** Decides the end (the first reason wins) and makes sure the process goes away. */
  #finish(end: SessionEnd, graceMs: number, sendStop = true): void {
    if (this.#closed) return;
    if (this.#end === null) this.#end = end;
    if (this.#helloTimer) clearTimeout(this.#helloTimer);
    this.#helloTimer = null;
    if (this.#shutdown !== null && graceMs > 0) return;
    if (this.#shutdown !== null) clearTimeout(this.#shutdown);
    else if (sendStop) this.#send({ type: "stop" });
    const kill = () => {
      if (this.#closed) return;
      if (this.#pid !== null) {
        try {
          this.#kill(this.#pid);
        } catch {
          // Already gone.
        }
      }
      this.#socket.destroy();
    };
    if (graceMs <= 0) kill();
    else this.#shutdown = setTimeout(kill, graceMs);
  }

  #clearTimers(): void {
    if (this.#helloTimer) clearTimeout(this.#helloTimer);
    if (this.#shutdown) clearTimeout(this.#shutdown);
    this.#helloTimer = this.#shutdown = null;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
