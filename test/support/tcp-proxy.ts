import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of one service (Redis, PostgreSQL) for one instance of a
 * fleet: `cut()` drops every connection and refuses new ones until `mend()`, as a network
 * partition between that instance and the service would, the others reaching it as before.
 * @example const p = await tcpProxy("127.0.0.1", 6379); p.url("redis://127.0.0.1:6379"); p.cut();
 */
export async function tcpProxy(host: string, port: number) {
  const open = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return client.destroy();
    const upstream = connect(port, host);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const own = (server.address() as { port: number }).port;
  return {
    port: own,
    /** `target` (a URL of the service) pointed at this proxy instead. */
    url(target: string): string {
      const u = new URL(target);
      u.hostname = "127.0.0.1";
      u.port = String(own);
      return u.toString();
    },
    cut(): void {
      cut = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    mend(): void {
      cut = false;
    },
    close(): Promise<void> {
      this.cut();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
