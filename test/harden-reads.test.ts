import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { type EmulatorHandle, useEmulator } from "./support/emulator.ts";
import { tornReason } from "./support/fs-record.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { repoRoot } from "./support/python.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "harden");
process.env.SVC_SECRET_KEY ??= "00".repeat(32);

/**
 * Fires `n` webhooks at once; as each 202 arrives, reads its event and session through `reader`
 * at once. Every read must find the record.
 */
async function readEachRightAfter(url: string, reader: EmulatorHandle, n: number) {
  const misses: string[] = [];
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await fetch(url, { method: "POST", body: JSON.stringify({ i }) });
      expect(res.status).toBe(202);
      const { event_id, session_id } = (await res.json()) as {
        event_id: string;
        session_id: string;
      };
      const [event, session] = await Promise.all([
        fetch(`${reader.url}/api/v1/events/${event_id}`),
        fetch(`${reader.url}/api/v1/sessions/${session_id}`),
      ]);
      if (event.status !== 200) misses.push(`${event_id}: ${event.status}`);
      if (session.status !== 200) misses.push(`${session_id}: ${session.status}`);
      else {
        const { session: rec } = (await session.json()) as { session: { event_id: string } };
        expect(rec.event_id).toBe(event_id);
      }
      // And it stays readable while the record is rewritten behind (running, then ended).
      for (let read = 0; read < 20; read++) {
        const again = await fetch(`${reader.url}/api/v1/sessions/${session_id}`);
        if (again.status !== 200) {
          misses.push(`${session_id} (read ${read + 2}): ${again.status}`);
          continue;
        }
        const { session: rec } = (await again.json()) as { session: { state: string } };
        if (["completed", "error", "stopped"].includes(rec.state)) break;
      }
    }),
  );
  expect(misses).toEqual([]);
}

describe("read your writes: ids in a 202 are readable at once (fs storage)", () => {
  const dir = mkdtempSync(join(tmpdir(), "hookline-rw-"));
  const emu = useEmulator({ storage: `fs:${dir}` });
  let urls: Record<string, string>;
  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  it("finds the event and session of each of 100 concurrent webhooks right after its 202", async () => {
    await readEachRightAfter(urls.hook!, emu, 100);
  }, 60_000);
});

/**
 * Why the fs store's reads hold: a rewrite goes to a temporary file renamed over the record
 * (src/storage/atomic-fs.ts). A writer in another process rewrites one 512 KiB record without
 * end while this process reads it; then the writer is SIGKILLed mid-stream. Written in place
 * (truncate, then write), a read finds an empty or half-written file, and so does the kill.
 */
describe("the fs store replaces a record atomically", () => {
  it("a reader in another process, and a SIGKILL mid-write, see one whole value, never a mix", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookline-atomic-"));
    const writer = spawn(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "test/support/fs-rewriter.ts"), dir],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
    );
    let written = -1;
    let seen = (_n: number) => {};
    writer.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = chunk.split("\n").filter(Boolean);
      written = Number(lines.at(-1));
      seen(written);
    });
    const exited = new Promise((resolve) => writer.on("exit", resolve));
    const writes = (n: number) =>
      new Promise<void>((resolve) => {
        seen = (w) => w >= n && resolve();
        seen(written);
      });
    const storage = createStorageFromUrl(`fs:${dir}`);
    try {
      await writes(0);
      // Counts, not time: at least 300 reads, across at least 40 rewrites.
      const torn: string[] = [];
      let reads = 0;
      while (reads < 300 || written < 40) {
        const why = tornReason(await storage.getItem("sessions:rewritten"));
        if (why) torn.push(`read ${reads}: ${why}`);
        reads++;
      }
      expect(torn.slice(0, 5), `${torn.length} of ${reads} reads torn`).toEqual([]);
      // Killed while it writes (it always is): the record is the last value written, or the next.
      const before = written;
      writer.kill("SIGKILL");
      await exited;
      const after = await storage.getItem("sessions:rewritten");
      expect(tornReason(after), "the record after a SIGKILL mid-write").toBeNull();
      expect((after as { n: number }).n).toBeGreaterThanOrEqual(before);
    } finally {
      writer.kill("SIGKILL");
      await storage.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

const fleet = warnIfNoFleet("read-your-writes across instances");
describe.skipIf(!fleet)(
  "read your writes across two instances on one PostgreSQL (Redis the bus)",
  () => {
    const { storage, redisUrl } = fleetStores();
    afterAll(dropPostgresTestTables);
    const a = useEmulator({ storage, redisUrl });
    const b = useEmulator({ storage, redisUrl });
    it("finds on B the event and session of each webhook A answered, right after the 202", async () => {
      const urls = await a.deploy(FIXTURE);
      await readEachRightAfter(urls.hook!, b, 100);
    }, 60_000);
  },
);
