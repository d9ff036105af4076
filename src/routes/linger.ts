/**
 * The lingering close of an HTTP connection whose answer came before its request's body was all
 * read: what the client still sends is read and dropped, within bounds, before the socket closes.
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/**
 * After an early answer (a 413, 408 or 404) the rest of the body is read and thrown away, up to
 * this many bytes and this long, so that the client gets to read the answer: closing a socket the
 * peer is still writing to makes the kernel send a reset, and the client sees "connection reset".
 */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
export const DISCARD_MAX_MS = 10_000;

const lingering = new WeakSet<Socket>();

/**
 * Keeps reading (and dropping) the request body after an early answer, and closes the socket only
 * once the client has sent everything, or past DISCARD_MAX_BYTES / DISCARD_MAX_MS. Node closes a
 * `Connection: close` response with `socket.destroySoon()`; this socket's gets the lingering
 * close instead. Used after the webhook routes' refusals (webhook-body.ts) and by the front door
 * when it relays such an answer from the host (src/front/proxy.ts).
 * @example if (!req.readableEnded) lingerThenClose(req); res.writeHead(413, { connection: "close" });
 */
export function lingerThenClose(incoming: IncomingMessage): void {
  const socket = incoming.socket as Socket | null;
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  let discarded = 0;
  let timer: NodeJS.Timeout | undefined;
  const destroy = () => {
    clearTimeout(timer);
    incoming.off("data", onData);
    if (socket.writableFinished || !socket.writable) socket.destroy();
    else socket.once("finish", () => socket.destroy());
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > DISCARD_MAX_BYTES) destroy();
  };
  incoming.on("data", onData);
  incoming.resume();
  socket.destroySoon = () => {
    if (timer) return;
    // The answer is written: half-close (FIN after it) and read on until the client is done.
    if (socket.writable) socket.end();
    timer = setTimeout(destroy, DISCARD_MAX_MS);
    timer.unref();
    if (incoming.readableEnded || incoming.destroyed) destroy();
    else {
      incoming.once("end", destroy);
      incoming.once("close", destroy);
    }
  };
}
