import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { sessionRecord } from "../../../test/support/records.ts";
import { redisTestUrl, warnIfNoRedis } from "../../../test/support/redis.ts";
import { createStorageFromUrl, redisTarget } from "../driver.ts";
import { createStores } from "../records.ts";

const enabled = warnIfNoRedis("the Redis journal's cost test");

/** Unrelated keys the database holds while the journal is read. */
const FILLER = 1_000_000;
/** Keys one EVAL writes or removes: Redis serves others between two of them. */
const CHUNK = 50_000;

/**
 * Reading a durable session's journal on Redis, or listing a project's session index, costs
 * the same commands whatever else the database holds: a hash per session (HKEYS, HMGET) and
 * per project (HKEYS), never a KEYS or SCAN, which walk every
 * key of the database. Commands are counted at the client (every command the stores send goes
 * through `sendCommand`), so other users of a shared Redis do not disturb the count.
 */
describe.skipIf(!enabled)("a session's journal on Redis", () => {
  const url = enabled ? redisTestUrl() : "";
  const base = enabled ? redisTarget(url)!.base : "";
  // Skipped, the body still runs to collect the tests: no store is made without Redis.
  const stores = enabled ? createStores(createStorageFromUrl(url)) : (null as never);
  const client = () => stores.storage.getMount("").driver.getInstance!() as Redis;
  afterAll(async () => {
    await fill("UNLINK");
    await stores.storage.clear();
    await stores.dispose();
  });

  /** Sets (or unlinks) `<base>:filler:<n>` for n < FILLER, server-side, a chunk per EVAL. */
  async function fill(command: "SET" | "UNLINK") {
    const script =
      command === "SET"
        ? "for i = ARGV[2], ARGV[3] do redis.call('SET', ARGV[1] .. i, '1') end"
        : "for i = ARGV[2], ARGV[3] do redis.call('UNLINK', ARGV[1] .. i) end";
    for (let from = 0; from < FILLER; from += CHUNK) {
      await client().eval(script, 0, `${base}:filler:`, from, from + CHUNK - 1);
    }
  }

  /** The commands (by name) that `read` sends, and what it returned. */
  async function commandsOf<T>(read: () => Promise<T>) {
    const sent: string[] = [];
    const redis = client();
    const original = redis.sendCommand.bind(redis);
    redis.sendCommand = ((cmd: { name: string }, ...rest: unknown[]) => {
      sent.push(cmd.name.toLowerCase());
      return (original as (...a: unknown[]) => unknown)(cmd, ...rest);
    }) as typeof redis.sendCommand;
    try {
      const got = await read();
      return { got, sent };
    } finally {
      redis.sendCommand = original;
    }
  }

  it("reads a journal and a project's session index with the same commands among a million unrelated keys, never a KEYS or SCAN", async () => {
    const id = "ses_journalcost0000000000000";
    await stores.sessions.commit(id, {
      steps: [
        { seq: 0, kind: "activity", function: "fetch", result: "r0" },
        { seq: 1, kind: "sleep" },
        { seq: 2, kind: "outcome" },
      ],
    });
    await stores.journals.append(id, { seq: 3, kind: "activity", function: "post", result: "r3" });
    await stores.journals.append("ses_other0000000000000000000", { seq: 0, kind: "outcome" });

    const rec = sessionRecord({ id, project_id: "prj_cost", state: "running" });
    await stores.sessions.put(rec, null);
    await stores.sessions.put({ ...rec, id: "ses_second000000000000000000" }, null);
    const journal = () => stores.journals.list(id);
    const index = () => stores.sessionIndex.entries("prj_cost");

    const before = { journal: await commandsOf(journal), index: await commandsOf(index) };
    await fill("SET");
    expect(await client().exists(`${base}:filler:${FILLER - 1}`)).toBe(1);
    const among = { journal: await commandsOf(journal), index: await commandsOf(index) };

    expect(before.journal.got.map((s) => s.seq)).toEqual([0, 1, 2, 3]);
    expect(among.journal.got).toEqual(before.journal.got);
    expect(among.journal.sent).toEqual(before.journal.sent);
    expect(among.journal.sent).toEqual(["hkeys", "hmget"]);
    expect(before.index.got.map((e) => e.id)).toEqual(["ses_second000000000000000000", id]);
    expect(among.index.got).toEqual(before.index.got);
    expect(among.index.sent).toEqual(["hkeys"]);
    console.log(
      `among ${FILLER} keys: journal ${among.journal.sent.join(", ")}; index ${among.index.sent.join(", ")}`,
    );
  }, 300_000);
});
