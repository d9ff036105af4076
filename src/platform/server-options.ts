import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Settings } from "../config.ts";
import { HooklineError } from "../errors.ts";
import { httpStatus, toProblem } from "../routes/problem.ts";

/** The Node HTTP server refuses header blocks past this size itself (431); Hookline's own check is 64 KiB. */
export const MAX_HEADER_SIZE = 80 * 1024;

/**
 * Options for `http.createServer`: header size, and the timeouts that close slow clients.
 * Node checks the timeouts on an interval; a short one makes them hold to about a second.
 * @example serverOptions(resolveSettings({}, {})).headersTimeout // 10000
 */
export function serverOptions(settings: Settings): ServerOptions {
  const headersTimeout = settings.headersTimeoutMs;
  // Node refuses a headers timeout longer than the request timeout.
  const requestTimeout = Math.max(settings.requestTimeoutMs, headersTimeout);
  return {
    maxHeaderSize: MAX_HEADER_SIZE,
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.min(1000, Math.max(100, headersTimeout / 4)),
  };
}

const CLIENT_ERRORS: Record<string, HooklineError> = {
  HPE_HEADER_OVERFLOW: new HooklineError(
    "headers_too_large",
    `the request headers exceed ${MAX_HEADER_SIZE / 1024} KiB`,
  ),
  ERR_HTTP_REQUEST_TIMEOUT: new HooklineError(
    "request_timeout",
    "the request did not arrive in time (SVC_HEADERS_TIMEOUT / SVC_REQUEST_TIMEOUT)",
  ),
};

/**
 * Requests Node's parser refuses (bad framing such as both Content-Length and
 * Transfer-Encoding, oversized headers, timeouts) never reach the app: answer them with
 * problem+json and `Connection: close` here, as every other error is answered.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const known =
    CLIENT_ERRORS[err.code ?? ""] ??
    new HooklineError("bad_request", "malformed HTTP request: the server could not parse it");
  const body = JSON.stringify(toProblem(known));
  // A response already started on this socket cannot be followed by another.
  if ((socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${httpStatus(known.code)} ${toProblem(known).title}\r\n` +
      "Content-Type: application/problem+json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}

/**
 * Settings that only exist on the server object: the connection cap and the answer to
 * requests the parser refuses.
 * @example configureServer(server, settings);
 */
export function configureServer(server: Server, settings: Settings): void {
  // Past the cap Node closes new connections as soon as they are accepted.
  if (settings.maxConnections > 0) server.maxConnections = settings.maxConnections;
  // A client that closes its side once it has sent the request (a half-close) still gets the
  // answer: by default Node drops a request whose answer is not written when the close
  // arrives, which an accept that waits for its commit never is.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on("clientError", answerClientError);
}

/**
 * Closes `server`'s connections still open after `graceMs` (at once when it is 0 or less):
 * Node's `close` stops listening and ends idle ones only.
 * @example server.close(); endConnections(server, 5_000);
 */
export function endConnections(server: Server, graceMs: number): void {
  if (graceMs <= 0) server.closeAllConnections();
  else setTimeout(() => server.closeAllConnections(), graceMs).unref();
}

/**
 * Stops `server` listening, lets its connections finish for `graceMs`, then closes them;
 * resolves once the server has closed.
 * @example await closeServer(server, 5_000);
 */
export function closeServer(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  endConnections(server, graceMs);
  return closed;
}
