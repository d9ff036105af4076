import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../emulator/start.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { type StandInDiscord, standInDiscord } from "./support/discord-gateway.ts";
import { folderFiles } from "./support/emulator.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";
import { until } from "./support/until.ts";

/**
 * Two instances on one PostgreSQL (Redis the bus) with one discord connection: only the
 * instance holding the bot's key (held by the database, renewed by its holder) opens the bot's
 * gateway; the other waits, and takes the gateway over once the holder is killed (SIGKILL) and
 * its claim has run out. Each message makes one event, whichever instance holds the gateway.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-discord");
const TOKEN = "discord-fleet-t0ken";
const PROJECT = "discord_events";
process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoFleet("the Discord gateway's multi-instance suite");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);

/** The management API of the service at `url`. */
const api = async <T>(url: string, path: string, init: RequestInit = {}): Promise<T> => {
  const res = await fetch(`${url}/api/v1${path}`, {
    ...init,
    headers: { "content-type": "application/json" },
  });
  const body = res.status === 204 ? null : await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body as T;
};

describe.skipIf(!enabled)("Discord's gateway on instances sharing one PostgreSQL", () => {
  let discord: StandInDiscord;
  let other: ResultPromise | null = null;
  let a: { emulator: Emulator; dataHome: string } | null = null;
  const home = mkdtempSync(join(tmpdir(), "hookline-discord-fleet-"));
  const aLines: string[] = [];
  beforeAll(async () => {
    discord = await standInDiscord(TOKEN);
  });
  afterAll(async () => {
    try {
      if (other?.pid) process.kill(-other.pid, "SIGKILL");
    } catch {
      // Already gone: the test killed it.
    }
    await other?.catch(() => {});
    await a?.emulator.close().catch(() => {});
    if (a) rmSync(a.dataHome, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    await discord.close();
  }, 60_000);

  /** The prints of every ended session, sorted, once `n` have ended. */
  const prints = async (url: string, n: number) => {
    const ended = await until(`${n} sessions to end`, async () => {
      const { sessions } = await api<{ sessions: SessionRecord[] }>(
        url,
        `/sessions?project=${PROJECT}&limit=100`,
      );
      // A listing read while a session's index entry moves may name it twice: once each.
      const done = [
        ...new Map(sessions.filter((s) => s.state === "completed").map((s) => [s.id, s])).values(),
      ];
      return done.length >= n ? done : undefined;
    });
    const all = await Promise.all(
      ended.map((s) => api<{ prints: { text: string }[] }>(url, `/sessions/${s.id}/prints`)),
    );
    return all.flatMap((p) => p.prints.map((x) => x.text)).sort();
  };
  /** The bots' keys in the fleet's claims table (a key let go has no row; an expired one keeps it). */
  const heldKeys = async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      const table = `${new URL(storage).searchParams.get("table")}_once`;
      const r = await client.query(`SELECT key FROM ${table} WHERE key LIKE 'discord-gateway:%'`);
      return r.rows.map((row: { key: string }) => row.key);
    } finally {
      await client.end();
    }
  };
  /** How many distinct events the project has. */
  const events = async (url: string) => {
    const { events } = await api<{ events: { id: string }[] }>(
      url,
      `/events?project=${PROJECT}&limit=100`,
    );
    return new Set(events.map((e) => e.id)).size;
  };
  const message = (id: string, content: string) => ({
    id,
    channel_id: "c-1",
    content,
    author: { id: "7", username: "alice" },
  });

  it("opens the gateway on one instance only, and on the other once the holder is killed", async () => {
    const port = await freePort();
    other = execa("node", [join(repoRoot, "bin/cli.mjs"), "up", "--port", String(port)], {
      env: {
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: await testPython(),
        SVC_STORAGE: storage,
        SVC_REDIS_URL: redisUrl ?? "",
        SVC_LEASE: "1.5",
        SVC_SECRET_KEY: "00".repeat(32),
      },
      detached: true,
      reject: false,
    });
    const b = `http://127.0.0.1:${port}`;
    await waitHealthy(b, 60_000);
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    const body = JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files });
    await api(b, "/deploy", { method: "POST", body });
    const put = (name: string, value: string, secret = false) =>
      api(b, `/envs/${PROJECT}/vars/bot__${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    await put("base_url", discord.api);
    await put("BotToken", TOKEN, true);
    await until("B's identify", () => discord.identifies.length === 1 && discord.open === 1);

    // A joins: it sees the bot, finds its key held, and opens nothing.
    const flags = { storage, redisUrl, leaseMs: 1500 };
    a = await startQuietEmulator(await testPython(), flags, undefined, (l) => aLines.push(l));
    await until("A to find the gateway held", () =>
      aLines.some((l) => l.includes("another instance holds the bot's gateway")),
    );
    expect(discord.identifies).toHaveLength(1);
    expect(discord.open).toBe(1);
    discord.dispatch("MESSAGE_CREATE", message("m1", "to B"));
    expect(await prints(a.emulator.url, 1)).toEqual(["message_create: 'to B' from alice in c-1"]);

    // B dies holding the gateway: A takes it over once B's claim has run out.
    process.kill(-other.pid!, "SIGKILL");
    await other;
    await until("B's socket gone", () => discord.open === 0);
    await until("A's identify", () => discord.identifies.length === 2 && discord.open === 1);
    expect(aLines.some((l) => l.includes("opening the bot's gateway"))).toBe(true);
    discord.dispatch("MESSAGE_CREATE", message("m2", "to A"));
    expect(await prints(a.emulator.url, 2)).toEqual([
      "message_create: 'to A' from alice in c-1",
      "message_create: 'to B' from alice in c-1",
    ]);
    expect(await events(a.emulator.url)).toBe(2);
    expect(discord.identifies).toHaveLength(2);

    // A stops: its gateway closed and the bot's key let go, for another instance to take at once.
    await a.emulator.close();
    await until("A's socket closed", () => discord.open === 0);
    expect(await heldKeys()).toEqual([]);
  }, 180_000);
});
