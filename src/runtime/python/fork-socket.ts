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
 * Calls `then` once, when the session on `socket` is past its start: its process has sent a line
 * after `hello` (its first after reading `start`: an outcome, a print, a request, `done`), or the
 * socket has closed, or `ms` have gone by. Only watches: a paused socket stays paused.
 * @example pastStart(socket, () => server.refill(), 20);
 */
export function pastStart(socket: net.Socket, then: () => void, ms: number): void {
  let lines = 0; // `hello` is the first
  const fire = () => {
    clearTimeout(timer);
    socket.off("data", onData);
    socket.off("close", fire);
    then();
  };
  const onData = (chunk: Buffer) => {
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, nl + 1)) {
      if (++lines >= 2) return fire();
    }
  };
  const timer = setTimeout(fire, ms);
  socket.on("data", onData);
  socket.once("close", fire);
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
