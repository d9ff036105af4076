import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { afterAll } from "vitest";
import {
  type BaseServices,
  type ComposedService,
  type ComposeOptions,
  composeApp,
} from "../../src/platform/compose.ts";
import type { Runtime } from "../../src/runtime/runtime.ts";
import { createSecretBox } from "../../src/secrets.ts";

export type Fetch = (path: string, init?: RequestInit) => Promise<Response>;

/** The app's options a test sets; its services go over a memory storage and a new secret box. */
export type TestAppOptions = Omit<Partial<ComposeOptions>, "services"> & {
  services?: Partial<BaseServices>;
};

export interface Target {
  name: string;
  /** Builds an app and a way to reach it; the server target listens on a random port. */
  make(runtime: Runtime, opts?: TestAppOptions): Promise<{ fetch: Fetch; hook: ComposedService }>;
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
});

function build(runtime: Runtime, opts: TestAppOptions) {
  const { services, ...rest } = opts;
  const storage = createStorage({ driver: memory() });
  const secrets = createSecretBox(randomBytes(32));
  return composeApp({ services: { storage, runtime, secrets, ...services }, ...rest });
}

/** One suite, two targets: `app.request()` in process, and a real server over HTTP. */
export const targets: Target[] = [
  {
    name: "in-process",
    async make(runtime, opts = {}) {
      const hook = build(runtime, opts);
      return { hook, fetch: async (path, init) => hook.app.request(path, init) };
    },
  },
  {
    name: "http",
    async make(runtime, opts = {}) {
      const hook = build(runtime, opts);
      const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
        const s = serve({ fetch: hook.app.fetch, hostname: "127.0.0.1", port: 0 }, () =>
          resolve(s),
        );
      });
      const { port } = server.address() as AddressInfo;
      closers.push(
        () =>
          new Promise((r) => {
            (server as import("node:http").Server).closeAllConnections?.();
            server.close(() => r());
          }),
      );
      return { hook, fetch: (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init) };
    },
  },
];

/** A deploy request body from a manifest and files given as text. */
export function deployBody(manifest: string, files: Record<string, string> = {}) {
  return {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      manifest,
      manifest_file: "manifest.yaml",
      files: Object.fromEntries(
        Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
      ),
    }),
  };
}
