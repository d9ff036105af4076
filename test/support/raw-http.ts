import { connect } from "node:net";

export interface RawResult {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** The status of the first response line, or null when none came. */
  status: number | null;
  /** The socket error seen (ECONNRESET, EPIPE), if any. */
  error: string | null;
}

/**
 * Talks HTTP/1.1 by hand over a TCP socket, for requests a client library refuses to send
 * (bad framing, bodies that stop early). `send` writes to the socket; the result is what came
 * back once the server closed, or once `settleMs` passed after the last byte read. `end()` half-
 * closes; `end("reset")` drops the connection with a TCP reset.
 * @example const r = await rawExchange(port, async (w) => { await w("GET / HTTP/1.1\r\n\r\n"); });
 */
export function rawExchange(
  port: number,
  send: (
    write: (chunk: string | Buffer) => Promise<void>,
    end: (how?: "reset") => void,
  ) => Promise<void>,
  opts: { settleMs?: number; timeoutMs?: number } = {},
): Promise<RawResult> {
  return new Promise((resolve) => {
    // Half-open allowed: like urllib, the client goes on sending after the server's FIN.
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let idle: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(idle);
      clearTimeout(limit);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : null, error });
    };
    const limit = setTimeout(done, opts.timeoutMs ?? 15_000);
    socket.on("data", (b) => {
      chunks.push(b);
      if (opts.settleMs !== undefined) {
        clearTimeout(idle);
        idle = setTimeout(done, opts.settleMs);
      }
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.on("close", done);
    const write = (chunk: string | Buffer) =>
      new Promise<void>((r) => {
        if (socket.destroyed || !socket.writable) return r();
        if (socket.write(chunk)) r();
        else {
          const go = () => {
            socket.off("close", go);
            socket.off("drain", go);
            r();
          };
          socket.once("drain", go);
          socket.once("close", go);
        }
      });
    socket.once("connect", () => {
      const end = (how?: "reset") => (how === "reset" ? socket.resetAndDestroy() : socket.end());
      send(write, end).catch((e) => {
        error ??= String(e);
      });
    });
  });
}

/** The JSON body of a raw HTTP response (after the blank line). */
export function rawJson(text: string): unknown {
  const at = text.indexOf("\r\n\r\n");
  return JSON.parse(text.slice(at + 4));
}
