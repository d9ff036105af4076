/** What a command touches of the outside world, so tests can run `run()` in-process. */
export interface Io {
  /** Write one line to standard output. */
  out(line: string): void;
  /** Write one line to standard error. */
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** All of standard input, as UTF-8. */
  readStdin(): Promise<string>;
  stdinIsTTY: boolean;
}

/** A failure to report as one `error: <message>` line (exit code 1). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/** Wrong usage: the command's usage goes to stderr, then `error: <message>`, exit code 1. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The command already printed what went wrong; just exit with `code`. */
export class ExitError extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.name = "ExitError";
    this.code = code;
  }
}

let pipeClosed = false;
const guarded = new WeakSet<NodeJS.WriteStream>();

/**
 * What a closed output pipe (`cli session list | head -1`) does: the command ends quietly with
 * status 0, as a Unix tool ends on SIGPIPE (Node ignores that signal and reports EPIPE instead).
 * A command that serves (`up`) has SIGTERM listeners: it is stopped through them, cleanly.
 */
function onStreamError(e: NodeJS.ErrnoException): void {
  if (e.code !== "EPIPE") throw e;
  if (pipeClosed) return;
  pipeClosed = true;
  if (process.listenerCount("SIGTERM") > 0) process.emit("SIGTERM", "SIGTERM");
  else process.exit(0);
}

function guard(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  if (!guarded.has(stream)) {
    guarded.add(stream);
    stream.on("error", onStreamError);
  }
  return stream;
}

/** One line to `stream`, unless an output pipe has closed (writing on would only fail again). */
function writeLine(stream: NodeJS.WriteStream, line: string): void {
  if (!pipeClosed) guard(stream).write(`${line}\n`);
}

/**
 * The real process's streams and environment. A closed stdout or stderr pipe ends the command
 * with status 0 and no output (see `onStreamError`).
 * @example await run(argv, processIo())
 */
export function processIo(): Io {
  guard(process.stdout);
  guard(process.stderr);
  return {
    out: (line) => writeLine(process.stdout, line),
    err: (line) => writeLine(process.stderr, line),
    env: process.env,
    cwd: process.cwd(),
    readStdin: () => readAll(process.stdin),
    stdinIsTTY: Boolean(process.stdin.isTTY),
  };
}

/**
 * Read a stream to its end as UTF-8.
 * @example await readAll(Readable.from(["a", "b"])) // "ab"
 */
export async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Drop one trailing newline (`\n` or `\r\n`), as a shell's `$(…)` would, but only one.
 * @example stripOneNewline("s3cret\n\n") // "s3cret\n"
 */
export function stripOneNewline(text: string): string {
  if (text.endsWith("\r\n")) return text.slice(0, -2);
  if (text.endsWith("\n")) return text.slice(0, -1);
  return text;
}
