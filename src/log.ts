/** The service's own log: one line per call, never a secret or a traceback of user code. */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

/** Writes `<ISO time> <level> <msg>` lines to stderr. */
export function consoleLogger(write: (line: string) => void = (l) => process.stderr.write(l)) {
  const line = (level: string, msg: string) =>
    write(`${new Date().toISOString()} ${level} ${msg}\n`);
  return {
    info: (msg: string) => line("info", msg),
    warn: (msg: string) => line("warn", msg),
    error: (msg: string, err?: unknown) =>
      line("error", err instanceof Error ? `${msg}: ${err.stack ?? err.message}` : msg),
  } satisfies Logger;
}

/** Keeps quiet: the logger where none is given (the app, the UI, inbound routes) and in tests. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
