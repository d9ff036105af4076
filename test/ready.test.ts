import { rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../emulator/start.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { deployFolder } from "./support/process.ts";
import { testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";

/**
 * Ready means ready: two instances on one PostgreSQL (Redis the bus), each building its own Python environment (as
 * `cli up` does), behind a round-robin router. A deploy on A, then at once 30 synchronous
 * requests through the router: none may fail because it reached B before B was prepared.
 */
const FIXTURES = join(import.meta.dirname, "fixtures");
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the readiness suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);

/** A node:http proxy sending each request to the next upstream in turn; counts what each got. */
function roundRobin(
  upstreams: string[],
): Promise<{ url: string; served: number[]; server: Server }> {
  const served = upstreams.map(() => 0);
  let next = 0;
  const server = createServer(async (req, res) => {
    const i = next++ % upstreams.length;
    served[i]!++;
    const target = new URL(req.url ?? "/", upstreams[i]);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (retried: boolean) => {
      const out = request(target, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on("error", (err: NodeJS.ErrnoException) => {
        // A pooled keep-alive connection the upstream closed as it went idle: the request was
        // not read there; send it once more (see `request.reusedSocket` in Node's docs).
        if (err.code === "ECONNRESET" && out.reusedSocket && !retried) return send(true);
        res.writeHead(502).end();
      });
      out.end(Buffer.concat(chunks));
    };
    send(false);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, served, server });
    }),
  );
}

async function readyz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.skipIf(!enabled)("instances that say ready only when they are", () => {
  const started: { emulator: Emulator; dataHome: string }[] = [];
  let a: Emulator;
  let b: Emulator;
  const early: { status: number; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    // workerPython unset: each instance builds a venv in its own data home, as `cli up` does.
    const python = await testPython();
    const flags = {
      storage,
      redisUrl,
      leaseMs: 1500,
      workerPython: undefined,
      syncTimeoutMs: 10_000,
    };
    const [sa, sb] = await Promise.all([
      startQuietEmulator(python, flags, "hookline-ready-"),
      startQuietEmulator(python, flags, "hookline-ready-"),
    ]);
    started.push(sa, sb);
    a = sa.emulator;
    b = sb.emulator;
    // Listening, but each is still building its Python environment in its data home.
    early.push(await readyz(a.url), await readyz(b.url));
    for (const emu of [a, b]) {
      for (let i = 0; i < 1800 && (await readyz(emu.url)).status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all(started.map((s) => s.emulator.close()));
    for (const s of started) rmSync(s.dataHome, { recursive: true, force: true });
  }, 60_000);

  it("answers 503 with a reason until its Python environment is prepared", async () => {
    for (const r of early) {
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ ok: false, reason: expect.stringMatching(/Python/) });
    }
    expect((await readyz(a.url)).status).toBe(200);
    expect((await readyz(b.url)).status).toBe(200);
  });

  it("answers all of 30 sync requests through a round-robin router right after a deploy", async () => {
    const router = await roundRobin([a.url, b.url]);
    try {
      const res = await deployFolder(a.url, join(FIXTURES, "ready"));
      expect(res.status).toBe(200);
      const { triggers } = (await (
        await fetch(`${a.url}/api/v1/triggers?project=ready_rules`)
      ).json()) as { triggers: { name: string; webhook_path: string }[] };
      const path = triggers.find((t) => t.name === "answer")!.webhook_path;
      const statuses: number[] = [];
      const bodies: string[] = [];
      // Five at a time: a burst, without asking 2 shared cores for 30 processes at once.
      for (let round = 0; round < 6; round++) {
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => fetch(router.url + path, { method: "POST" })),
        );
        for (const r of answers) {
          statuses.push(r.status);
          bodies.push(await r.text());
        }
      }
      expect(statuses).toEqual(Array(30).fill(200));
      expect(new Set(bodies)).toEqual(new Set(["hello"]));
      expect(router.served).toEqual([15, 15]);
    } finally {
      router.server.closeAllConnections();
      await new Promise((r) => router.server.close(r));
    }
  }, 120_000);
});
