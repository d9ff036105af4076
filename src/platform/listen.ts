import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import type { Settings } from "../config.ts";
import type { FrontGate } from "../front/gate.ts";
import { type FrontDoor, type FrontTarget, startFrontDoor } from "../front/host.ts";
import { closeServer, configureServer, endConnections, serverOptions } from "./server-options.ts";

type Fetch = Parameters<typeof serve>[0]["fetch"];

/** Where the service listens, and how it stops listening. */
export interface Listening {
  /** The port it got (settings may ask for 0). */
  port: number;
  /**
   * Stops listening; connections still open after `graceMs` are closed (0: at once). Resolves
   * once the server (both, with a front door) has closed.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * The service's HTTP server, listening: the app on one server, or, given a front door's gate,
 * the front door's thread on the service's address and the app behind it (src/front/host.ts).
 * @example const { port, close } = await listenService(settings, drain.fetch, null);
 */
export async function listenService(
  settings: Settings,
  fetch: Fetch,
  front: { gate: FrontGate; target: FrontTarget } | null,
): Promise<Listening & { front: FrontDoor | null }> {
  if (front) {
    const door = await startFrontDoor(settings, fetch, front.gate, front.target);
    return { port: door.port, close: (graceMs) => door.close(graceMs), front: door };
  }
  const server = await new Promise<ReturnType<typeof serve>>((resolvePromise, reject) => {
    const s = serve(
      {
        fetch,
        hostname: settings.host,
        port: settings.port,
        serverOptions: serverOptions(settings),
      },
      () => resolvePromise(s),
    );
    configureServer(s as Server, settings);
    s.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  let closed: Promise<void> | null = null;
  // A second call (a second signal) may shorten the grace; the server closes once.
  const close = (graceMs: number) => {
    if (closed) endConnections(server as Server, graceMs);
    else closed = closeServer(server as Server, graceMs);
    return closed;
  };
  return { port, close, front: null };
}
