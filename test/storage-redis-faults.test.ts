// Redis gone mid-run under a running service (SVC_STORAGE=redis://…, a redis-server of this test's
// own): webhooks answer 503 with Retry-After, never 202 for an event not stored; once Redis is
// back the service recovers without a restart (see docs/limits.md).
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { freePort } from "./support/process.ts";

const FIXTURE = new URL("./fixtures/faults", import.meta.url).pathname;
const port = await freePort();
let redis: ResultPromise | null = null;

async function startRedis() {
  redis = execa(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      reject: false,
    },
  );
  for (let i = 0; i < 100; i++) {
    const r = await execa("redis-cli", ["-p", String(port), "ping"], { reject: false });
    if (r.stdout === "PONG") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("redis-server did not start");
}

async function stopRedis() {
  redis?.kill("SIGKILL");
  await redis;
  redis = null;
}

describe("Redis that goes away", () => {
  beforeAll(startRedis);
  afterAll(stopRedis);
  describe("under a running service", () => {
    const emu = useEmulator({ storage: `redis://127.0.0.1:${port}` });
    let urls: Record<string, string>;
    beforeAll(async () => {
      urls = await emu.deploy(FIXTURE);
    }, 60_000);

    it("503 with Retry-After while it is gone, then recovery when it is back", async () => {
      const first = await fetch(urls.fine!, { method: "POST", body: "{}" });
      expect(first.status).toBe(202);
      await stopRedis();
      const res = await fetch(urls.fine!, { method: "POST", body: "{}" });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      // A new, empty Redis: only what is written from now on is there (the deploy was lost with
      // it, so the trigger answers 404 until redeployed: the service itself needed no restart).
      await startRedis();
      urls = await emu.deploy(FIXTURE);
      const again = await fetch(urls.fine!, { method: "POST", body: "{}" });
      expect(again.status).toBe(202);
      const { session_id } = (await again.json()) as { session_id: string };
      expect((await emu.ended(session_id)).state).toBe("completed");
    }, 90_000);
  });
});
