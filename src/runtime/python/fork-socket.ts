import net from "node:net";

export interface Prefetched {
  /** The socket with what it has read so far put back, or null when it has closed since. */
  take(): net.Socket | null;
  discard(): void;
}

/**
 * Watches a connection made ahead of need: what arrives is kept, a close is noticed. `stale`
 * says its server has gone since (its child is dying, whether or not the close has arrived).
 * @example const ahead = prefetched(socket, () => false); const ready = ahead.take();
 */
export function prefetched(socket: net.Socket, stale: () => boolean): Prefetched {
  const chunks: Buffer[] = [];
  let closed = false;
  const onData = (chunk: Buffer) => chunks.push(chunk);
  const onClose = () => {
    closed = true;
  };
  socket.on("data", onData);
  socket.once("close", onClose);
  socket.on("error", () => {});
  return {
    take() {
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.pause();
      if (closed || socket.destroyed || stale()) {
        socket.destroy();
        return null;
      }
      if (chunks.length) socket.unshift(Buffer.concat(chunks));
      return socket;
    },
    discard() {
      socket.destroy();
    },
  };
}

/**
 * A connection to the fork server's socket (the server forks a child for it).
 * @example const socket = await openSocket("/tmp/hookline-x/fork.sock");
 */
export function openSocket(path: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(path);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}
