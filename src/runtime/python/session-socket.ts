import type { Duplex } from "node:stream";
import type { SessionEnd } from "../../model/records.ts";
import type { SessionHost, SessionRun, SessionSpec } from "../runtime.ts";
import { endAfterClose } from "./exits.ts";
import { encodeLine, LineSplitter } from "./ndjson.ts";
import { PartsInbox } from "./parts.ts";
import { type FromPython, parseMessage } from "./protocol.ts";
import { toSessionEnd, toStartMessage } from "./requests.ts";
import { actOn, errorText, type MessageTarget } from "./session-messages.ts";

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
 * One session over one socket: reads its lines, sends `start` after `hello`, hands each message
 * to `actOn` (session-messages.ts: host calls, replies and acks), makes sure the process goes
 * away, and ends in exactly one `SessionEnd` once the socket has closed.
 * @example const run = new SessionSocket(socket, spec, "/data/builds/bld_1", host); await run.done;
 */
export class SessionSocket implements SessionRun {
  readonly done: Promise<SessionEnd>;
  readonly #socket: Duplex;
  readonly #spec: SessionSpec;
  readonly #projectDir: string;
  readonly #target: MessageTarget;
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
    this.#grace = options.stopGraceMs ?? 2000;
    this.#kill = options.kill ?? ((pid) => process.kill(pid, "SIGKILL"));
    this.#announceStart = options.announceStart ?? true;
    this.#reuse = options.reuse ?? false;
    this.#target = {
      host,
      durable: spec.durable,
      send: (message) => this.#send(message),
      fail: (message) => this.#fail(message),
      hello: (pid) => this.#onHello(pid),
      done: (m) => this.#onDone(m),
      parts: new PartsInbox(),
    };
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
      endAfterClose(this.#pid, options.exitEnd, resolve);
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
    return actOn(m, this.#target);
  }

  /** The process ended the session: it stays for another (reuse) or exits by itself. */
  #onDone(m: Extract<FromPython, { type: "done" }>): void {
    this.slowImport = m.slow_import === true;
    if (m.reuse === true && this.#reuse) this.#release(toSessionEnd(m, this.#projectDir));
    // It exits by itself after `done`: a `stop` would only meet a closed socket.
    else this.#finish(toSessionEnd(m, this.#projectDir), this.#grace, false);
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
    const ready = this.#announceStart ? this.#target.host.started() : undefined;
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
