import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { HooklineError } from "../errors.ts";
import { lingerThenClose } from "./linger.ts";

/** How a webhook body is read, and how long a refused client may go on sending. */
export interface BodyLimits {
  /** Largest accepted body, bytes (`SVC_MAX_BODY`). */
  maxBody: number;
  /** Longest wait for the whole body once the headers are in, ms (`SVC_BODY_TIMEOUT`). */
  timeoutMs: number;
}

const tooLarge = (max: number) =>
  new HooklineError("too_large", `the request body exceeds ${max} bytes`);

/**
 * The Node request behind a Hono context, when the app runs on @hono/node-server.
 * @example const incoming = nodeIncoming(c); // undefined under `app.request()`
 */
export function nodeIncoming(c: Context): IncomingMessage | undefined {
  const env = c.env as { incoming?: IncomingMessage } | undefined;
  return env?.incoming && typeof env.incoming.on === "function" ? env.incoming : undefined;
}

/**
 * Reads a webhook body: refuses (413) past `maxBody` bytes without buffering the excess, (408)
 * when it does not arrive within `timeoutMs`, and (400) when the client closes before sending
 * all it announced. After a refusal the answer carries `Connection: close` and the connection
 * lingers, discarding what the client still sends (bounded), so the client reads the answer.
 * @example const body = await readWebhookBody(c, { maxBody: 1 << 20, timeoutMs: 30_000 });
 */
export async function readWebhookBody(c: Context, limits: BodyLimits): Promise<Uint8Array> {
  // Bodies of GET and HEAD are not read (Node discards them).
  if (c.req.method === "GET" || c.req.method === "HEAD") return new Uint8Array();
  const incoming = nodeIncoming(c);
  if (!incoming) return readWebBody(c.req.raw, limits.maxBody);
  try {
    return await readIncoming(incoming, limits);
  } catch (err) {
    c.header("Connection", "close");
    lingerThenClose(incoming);
    throw err;
  }
}

function readIncoming(incoming: IncomingMessage, limits: BodyLimits): Promise<Uint8Array> {
  const { maxBody: max } = limits;
  const declared = incoming.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) return Promise.reject(tooLarge(max));
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | null) => {
      clearTimeout(timer);
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("close", onClose);
      incoming.off("error", onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > max) return settle(tooLarge(max));
      chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    // Node ends the body only once all of Content-Length (or the last chunk) has come: a close
    // before that is a client that gave up, and what it sent is not an event.
    const onClose = () =>
      settle(
        new HooklineError("bad_request", "the client closed the connection before the body ended"),
      );
    const timer = setTimeout(
      () =>
        settle(
          new HooklineError(
            "request_timeout",
            `the request body did not arrive within ${limits.timeoutMs / 1000} s`,
          ),
        ),
      limits.timeoutMs,
    );
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("close", onClose);
    incoming.on("error", onClose);
  });
}

/**
 * For an answer given before the body was read (404, 431, 503): the same lingering close as
 * after a 413, so a client still sending reads the answer rather than a reset.
 * @example try { … } catch (e) { closeAfterUnreadBody(c); throw e; }
 */
export function closeAfterUnreadBody(c: Context): void {
  const incoming = nodeIncoming(c);
  if (!incoming || incoming.readableEnded || incoming.destroyed) return;
  c.header("Connection", "close");
  lingerThenClose(incoming);
}

/** The same reading over a web Request (app.request() in unit tests, other platforms). */
async function readWebBody(req: Request, max: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > max) throw tooLarge(max);
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
