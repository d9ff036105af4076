import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import type { Emulator } from "../emulator/start.ts";
import type { EventRecord, ScheduleData, SessionRecord } from "../src/model/records.ts";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";
import { until } from "./support/until.ts";

/** Schedules across a restart (missed slots fire once) and across instances (each slot once). */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Two instances share one PostgreSQL below: they share the key its sealed data is written with.
process.env.SVC_SECRET_KEY ??= "00".repeat(32);
const DAY = 24 * 3_600_000;
const b64 = (s: string) => Buffer.from(s).toString("base64");
const CODE = b64(
  "import autokitteh\n\ndef on_tick(event):\n    print(event.data.due, event.data.missed)\n",
);

async function api<T>(base: string, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { "content-type": "application/json" },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const deploy = (base: string, manifest: string) =>
  api(base, "/deploy", {
    method: "POST",
    body: JSON.stringify({ manifest, files: { "program.py": CODE } }),
  });

const manifest = (name: string, schedule: string) =>
  `version: v1\nproject:\n  name: ${name}\n  triggers:\n    - name: tick\n      schedule: "${schedule}"\n      call: program.py:on_tick\n`;

async function eventsOf(base: string, project: string): Promise<EventRecord[]> {
  const { events } = await api<{ events: EventRecord[] }>(
    base,
    `/events?project=${project}&limit=1000`,
  );
  return events;
}

describe("a schedule missed while the service was down", () => {
  const dir = mkdtempSync(join(tmpdir(), "hookline-sched-restart-"));
  const storage = `fs:${join(dir, "store")}`;
  let emu: Emulator | null = null;
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fires once at start, for the latest slot, not once per missed slot", async () => {
    // A daily slot twelve hours away from now: the run cannot reach the next real slot, whatever
    // the hour it runs at (an `@hourly` trigger fired its real slot beside the missed one when a
    // run crossed the hour).
    const hour = (new Date().getUTCHours() + 12) % 24;
    const latest = new Date();
    latest.setUTCHours(hour, 0, 0, 0);
    if (latest.getTime() > Date.now()) latest.setUTCDate(latest.getUTCDate() - 1);
    const python = await testPython();
    emu = (await startQuietEmulator(python, { storage })).emulator;
    await deploy(emu.url, manifest("restart_sched", `0 ${hour} * * *`));
    await emu.close();
    emu = null;

    // As if the service stopped three days ago, just after the trigger fired.
    const stores = createStores(createStorageFromUrl(storage));
    const doc = (await stores.projects.byName("restart_sched"))!;
    const trigger = doc.triggers[0]!;
    const lastDue = latest.getTime() - 3 * DAY;
    const long = new Date(lastDue - 2 * DAY).toISOString();
    await stores.projects.put({
      ...doc,
      triggers: [{ ...trigger, created_at: long, updated_at: long }],
    });
    await stores.storage.setItem(`schedules:${trigger.id}`, {
      due: new Date(lastDue).toISOString(),
    });
    await stores.dispose();

    emu = (await startQuietEmulator(python, { storage })).emulator;
    let sessions: SessionRecord[] = [];
    for (let i = 0; i < 100 && sessions.length === 0; i++) {
      await sleep(100);
      ({ sessions } = await api<{ sessions: SessionRecord[] }>(
        emu.url,
        "/sessions?project=restart_sched",
      ));
    }
    await sleep(1500); // room for a wrong second or third firing to show
    ({ sessions } = await api<{ sessions: SessionRecord[] }>(
      emu.url,
      "/sessions?project=restart_sched",
    ));
    expect(sessions).toHaveLength(1);
    const [event] = await eventsOf(emu.url, "restart_sched");
    const data = event!.data as ScheduleData;
    // The latest of the three missed slots fires; the two before it are counted, not fired.
    expect(data.due).toBe(latest.toISOString());
    expect(data.missed).toBe(2);
    expect(Date.parse(data.fired)).toBeGreaterThan(Date.parse(data.due));
  }, 120_000); // two starts of the service and a deploy: room for a busy machine
});

describe("shutdown", () => {
  it("leaves no timer behind: the process exits by itself after close()", async () => {
    const script = join(import.meta.dirname, "fixtures", "schedules-exit", "run.ts");
    const r = await execa("npx", ["tsx", script, await testPython()], {
      cwd: repoRoot,
      reject: false,
      // The scheduler sleeps up to 60 s: a timer left behind would hold the process past this.
      timeout: 40_000,
    });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("closed");
    expect(r.exitCode).toBe(0);
  }, 90_000);
});

const enabled = warnIfNoFleet("the schedules-across-instances test");
describe.skipIf(!enabled)("instances sharing one PostgreSQL (Redis the bus)", () => {
  const { storage, redisUrl } = fleetStores();
  afterAll(dropPostgresTestTables);
  const a = useEmulator({ storage, redisUrl });
  const b = useEmulator({ storage, redisUrl });

  it("fire each slot of a schedule once", async () => {
    await deploy(a.url, manifest("shared_sched", "@every 1s"));
    // Three slots fired, waited for (the deadline only ends the wait), not a set time slept.
    await until(
      "three slots of the shared schedule to fire",
      async () => (await eventsOf(a.url, "shared_sched")).length >= 3,
    );
    // B learnt of the deploy over the bus and armed the same schedule.
    const { triggers } = await b.api<{ triggers: { next_fire: string | null }[] }>(
      "/triggers?project=shared_sched",
    );
    expect(triggers[0]!.next_fire).not.toBeNull();
    const dues = (await eventsOf(a.url, "shared_sched")).map((e) => (e.data as ScheduleData).due);
    expect(dues.length).toBeGreaterThanOrEqual(3);
    expect(new Set(dues).size).toBe(dues.length);
  });
});
