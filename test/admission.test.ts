// Admission, end to end: a service holds at most SVC_MAX_SESSIONS + SVC_MAX_QUEUED sessions
// alive; past that a webhook is refused with 503 and Retry-After and nothing is stored
// (docs/configuration.md, "waiting sessions"). Real service, real Python, real HTTP: the check
// is ingest's first step (src/sessions/ingest.ts), and this is what breaks when it is skipped.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "admission");

describe("a service with room for two sessions (SVC_MAX_SESSIONS=1, SVC_MAX_QUEUED=1)", () => {
  const emu = useEmulator({ maxSessions: 1, maxQueued: 1 });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  const events = async () =>
    (await emu.api<{ events: unknown[] }>("/events?limit=1000")).events.length;
  const post = (name: string, body: string) => fetch(urls[name]!, { method: "POST", body });

  /** Starts a session that stays alive until `release(key)`; resolves with its id. */
  async function start(key: string): Promise<string> {
    const res = await post("hold", key);
    expect(res.status, `webhook ${key}`).toBe(202);
    return ((await res.json()) as { session_id: string }).session_id;
  }

  const holding = (key: string, sessionId: string) =>
    until(`session ${key} to hold`, async () =>
      (await emu.prints(sessionId)).includes(`holding ${key}`),
    );

  async function release(key: string, sessionId: string) {
    await holding(key, sessionId);
    expect((await post("release", key)).status).toBe(202);
    expect((await emu.ended(sessionId)).state).toBe("completed");
  }

  it("refuses a third webhook with 503 and Retry-After, storing nothing; takes one again once there is room", async () => {
    // One session runs (and holds its slot), one waits for the slot: the service is full.
    const a = await start("a");
    await holding("a", a);
    const b = await start("b");
    const before = await events();
    const refused = await post("hold", "c");
    expect(refused.status, "a webhook past SVC_MAX_SESSIONS + SVC_MAX_QUEUED").toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { detail: string }).detail).toBe(
      "too many sessions are waiting to run; retry later",
    );
    expect(await events(), "events stored for the refused webhook").toBe(before);
    await release("a", a);
    await release("b", b);
    // Room again: the next webhook is taken.
    await release("d", await start("d"));
  });
});

describe("a synchronous request that cannot expect a process within half its time-out", () => {
  const emu = useEmulator({ maxSessions: 1, syncTimeoutMs: 2000 });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  const events = async () =>
    (await emu.api<{ events: unknown[] }>("/events?limit=1000")).events.length;
  const post = (name: string, body = "") => fetch(urls[name]!, { method: "POST", body });

  it("is refused at once with 503 and Retry-After, storing nothing; answered once there is room", async () => {
    const res = await post("hold", "a");
    const { session_id: a } = (await res.json()) as { session_id: string };
    await until("session a to hold the one slot", async () =>
      (await emu.prints(a)).includes("holding a"),
    );
    // The slot has been taken for longer than half the 2 s time-out (a lower bound on time,
    // not an upper one): a held request would wait longer than it may.
    await new Promise((r) => setTimeout(r, 1100));
    const before = await events();
    const refused = await post("ask");
    expect(refused.status, "a sync request that cannot start in time").toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(2);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /^too busy to answer in time: a process is expected in about \d+\.\d s; retry later$/,
    );
    expect(await events(), "events stored for the refused request").toBe(before);
    expect((await post("release", "a")).status).toBe(202);
    expect((await emu.ended(a)).state).toBe("completed");
    const answered = await post("ask");
    expect(answered.status).toBe(200);
    expect(await answered.text()).toBe("ok");
  });
});
