import {
  appendFileSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { until } from "../../test/support/until.ts";
import { ACCEPT_LOG_BACKLOG, AcceptLog, withAcceptLog } from "./accept-log.ts";
import { readAcceptLog } from "./accept-log-entry.ts";
import { replayAcceptLogs } from "./accept-log-replay.ts";
import { type BatchDriver, type BatchOp, lmdbDriver } from "./drivers/lmdb.ts";

/** `writeSync` as node:fs has it, counted, and failing once when asked (a full disk). */
const writes = vi.hoisted(() => ({ count: 0, failNext: false }));
vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  const writeSync = ((...args: Parameters<typeof fs.writeSync>) => {
    writes.count++;
    if (writes.failNext) {
      writes.failNext = false;
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    }
    return fs.writeSync(...args);
  }) as typeof fs.writeSync;
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});

/** Commits held until the test lets each land (or fail); each with the ops it was given. */
function heldCommits() {
  const held: { ops: BatchOp[]; land: () => void; fail: (e: Error) => void }[] = [];
  const commit = (ops: BatchOp[]) =>
    new Promise<void>((land, fail) => {
      held.push({ ops, land, fail });
    });
  return { held, commit };
}

const tick = () => new Promise((r) => setTimeout(r, 1));

const ops = (id: string, extra = "") => [
  { key: `events:${id}`, value: `{"id":"${id}"${extra}}` },
  { key: `sessions:${id}`, value: '{"state":"created"}' },
];

/** The last `n` bytes of a file zeroed, its size kept (what an OS crash can leave). */
function zeroTail(path: string, n: number): void {
  const fd = openSync(path, "r+");
  writeSync(fd, Buffer.alloc(n), 0, n, statSync(path).size - n);
  closeSync(fd);
}

describe("the accept log", () => {
  let root: string;
  let dir: string;
  let lmdb: BatchDriver;
  const failures: unknown[] = [];
  const failed = (e: unknown) => failures.push(e);
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "hookline-accept-log-"));
    dir = join(root, "db", "accepts");
    lmdb = lmdbDriver({ path: join(root, "db"), sync: "normal" });
    failures.length = 0;
  });
  afterEach(async () => {
    await lmdb.dispose?.();
    rmSync(root, { recursive: true, force: true });
  });
  const files = () => readdirSync(dir).filter((n) => n.endsWith(".log"));
  const sizes = () => files().map((n) => statSync(join(dir, n)).size);
  const never = () => new Promise<void>(() => {}); // a process killed before any commit

  it("returns once the batch is written, before its commit; empties the file once it lands", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    await log.take(ops("a")); // resolves with the commit still held
    expect(held.map((h) => h.ops)).toEqual([ops("a")]);
    expect(log.inFlight).toBe(1);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("a")]);
    let after = false;
    log.after(() => {
      after = true;
    });
    await tick();
    expect(after).toBe(false); // waits for the landing
    held[0]!.land();
    await log.settled();
    expect(after).toBe(true);
    await until("the file emptied", () => sizes()[0] === 0); // a moment after it all landed
    await log.close();
    expect(files()).toEqual([]);
  });

  it("commits the batches taken while a commit is in flight together, in order, once it lands", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    await log.take(ops("a"));
    await log.take(ops("b"));
    await log.take(ops("c"));
    expect(held).toHaveLength(1); // b and c wait for a's commit
    let landed = "";
    log.after(() => {
      landed = "b and c";
    });
    held[0]!.land();
    await until("the second commit", () => held.length === 2);
    expect(held[1]!.ops).toEqual([...ops("b"), ...ops("c")]);
    expect(landed).toBe("");
    held[1]!.land();
    await log.settled();
    expect(landed).toBe("b and c");
    expect(log.inFlight).toBe(0);
    await log.close();
  });

  it("keeps a batch whose commit failed, says so, and makes later writes wait for theirs", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    await log.take(ops("a"));
    held[0]!.fail(new Error("MDB_MAP_FULL"));
    await log.settled();
    expect(failures.map(String)).toEqual(["Error: MDB_MAP_FULL"]);
    let settled = false;
    const next = log.take(ops("b")).then(() => {
      settled = true;
    });
    await until("b's commit", () => held.length === 2);
    expect(settled).toBe(false); // no longer answered before its commit
    held[1]!.land();
    await next;
    await log.close();
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("a")]); // for the next start
  });

  it(`waits for the commit again once ${ACCEPT_LOG_BACKLOG} batches are in flight`, async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    for (let i = 0; i < ACCEPT_LOG_BACKLOG; i++) await log.take(ops(`s${i}`));
    let settled = false;
    const over = log.take(ops("over")).then(() => {
      settled = true;
    });
    // The one past the bound is committed on its own, after those before it, before it returns.
    let landed = 0;
    while (held.at(-1)?.ops[0]?.key !== "events:over") {
      while (landed < held.length) held[landed++]!.land();
      await tick();
    }
    expect(settled).toBe(false);
    held.at(-1)!.land();
    await over;
    expect(log.inFlight).toBe(0);
    await log.close();
  });

  it("seals a full file and removes it once every batch in it has landed", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    const big = `,"pad":"${"x".repeat(1024 * 1024)}"`;
    for (let i = 0; i < 5; i++) await log.take(ops(`s${i}`, big));
    expect(files()).toHaveLength(2); // three in the first (a fourth would pass 4 MiB), two after
    held[0]!.land(); // s0; then s1-s4 go as one commit
    await until("the second commit", () => held.length === 2);
    expect(files()).toHaveLength(2);
    held[1]!.land();
    await until("the sealed file removed", () => files().length === 1);
    await log.close();
    expect(files()).toEqual([]);
  });

  it("replays a gone writer's batches that never landed, skips those that did, stops at a torn tail", async () => {
    const driver = withAcceptLog(lmdb, new AcceptLog(dir, { commit: never, failed }));
    await driver.batch(ops("a"));
    await driver.batch(ops("b"));
    await driver.batch(ops("c"));
    const name = files()[0]!;
    zeroTail(join(dir, name), 3); // c's last bytes never reached the disk before an OS crash
    // b landed before the crash, and has changed since: replay must not undo that.
    await lmdb.batch([{ key: "events:b", value: '{"id":"b"}' }]);
    await lmdb.batch([{ key: "sessions:b", value: '{"state":"completed"}' }]);

    // A live process's log is left alone (the parent of this one is alive).
    const live = `${process.ppid}-1-1.log`;
    renameSync(join(dir, name), join(dir, live));
    expect(await replayAcceptLogs(dir, lmdb)).toBe(0);
    expect(files()).toEqual([live]);

    renameSync(join(dir, live), join(dir, "999999999-1-1.log")); // a pid no process has
    expect(await replayAcceptLogs(dir, lmdb)).toBe(1);
    expect(await lmdb.getItem("events:a", {})).toBe('{"id":"a"}');
    expect(await lmdb.getItem("sessions:a", {})).toBe('{"state":"created"}');
    expect(await lmdb.getItem("sessions:b", {})).toBe('{"state":"completed"}');
    expect(await lmdb.getItem("events:c", {})).toBeNull();
    expect(files()).toEqual([]);
  });

  it("reads the whole entries of a file and stops at one cut short", async () => {
    const log = new AcceptLog(dir, { commit: never, failed });
    for (const id of ["a", "b", "c"]) await log.take(ops(id));
    const path = join(dir, files()[0]!);
    truncateSync(path, statSync(path).size - 1);
    expect(readAcceptLog(path)).toEqual([ops("a"), ops("b")]);
  });

  it("reads back what it wrote: removals, any text, a batch past its buffer, in order", async () => {
    const log = new AcceptLog(dir, { commit: never, failed });
    const big = "x".repeat(300 * 1024); // past the 256 KiB buffer it keeps between entries
    const batches: BatchOp[][] = [
      [
        { key: "events:é", value: '{"text":"naïve ✓ 𝄞 \\"quoted\\""}' },
        { key: "gone", value: null },
      ],
      [{ key: "events:big", value: `{"b":"${big}"}` }],
      [
        { key: "events:after", value: '{"n":1}' },
        { key: "empty", value: "" },
      ],
    ];
    for (const b of batches) await log.take(b);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual(batches);
  });

  it("reads and replays a log an earlier version wrote, its batches as JSON", async () => {
    mkdirSync(dir, { recursive: true });
    const entry = (batch: BatchOp[]) => {
      const json = Buffer.from(JSON.stringify(batch));
      const head = Buffer.alloc(8);
      head.writeUInt32LE(json.length, 0);
      head.writeUInt32LE(crc32(json), 4);
      return Buffer.concat([head, json]);
    };
    const path = join(dir, "999999999-1-1.log"); // a pid no process has
    writeFileSync(path, Buffer.concat([entry(ops("a")), entry(ops("b"))]));
    expect(readAcceptLog(path)).toEqual([ops("a"), ops("b")]);
    expect(await replayAcceptLogs(dir, lmdb)).toBe(2);
    expect(await lmdb.getItem("events:b", {})).toBe('{"id":"b"}');
  });

  it("stops at an entry it cannot read, though its checksum holds", async () => {
    const log = new AcceptLog(dir, { commit: never, failed });
    await log.take(ops("a"));
    const path = join(dir, files()[0]!);
    const odd = Buffer.from([0x02, 1, 2, 3]); // neither its own encoding nor JSON
    const head = Buffer.alloc(8);
    head.writeUInt32LE(odd.length, 0);
    head.writeUInt32LE(crc32(odd), 4);
    appendFileSync(path, Buffer.concat([head, odd]));
    await log.take(ops("b")); // after the odd one: not read either
    expect(readAcceptLog(path)).toEqual([ops("a")]);
  });

  it("a batch it cannot write waits for its commit, and the next goes to a new file", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    await log.take(ops("a"));
    const first = files()[0];
    writes.failNext = true; // the disk is full
    let settled = false;
    const b = log.take(ops("b")).then(() => {
      settled = true;
    });
    held[0]!.land();
    await until("b's commit", () => held.length === 2);
    expect(settled).toBe(false);
    held[1]!.land();
    await b;
    await log.take(ops("c"));
    // A failed write may leave a part of its batch: that file takes no more (removed, as a
    // landed), and c starts a new one.
    expect(files()).toHaveLength(1);
    expect(files()[0]).not.toBe(first);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("c")]);
    held[2]!.land();
    await log.close();
  });

  it("a batch it cannot encode is not logged: it waits for its commit, which refuses it", async () => {
    const { held, commit } = heldCommits();
    const log = new AcceptLog(dir, { commit, failed });
    const odd = [{ key: "events:b", value: 1n as unknown as string }]; // not text
    const b = log.take(odd);
    await until("b's commit", () => held.length === 1);
    held[0]!.fail(new Error("not a string"));
    await expect(b).rejects.toThrow("not a string");
    await log.take(ops("c"));
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("c")]);
    held[1]!.land();
    await log.close();
  });

  it("writes the batches taken in one turn of the event loop with one write, in order", async () => {
    const log = new AcceptLog(dir, { commit: never, failed });
    await log.take(ops("a"));
    const before = writes.count;
    const taken = ["b", "c", "d"].map((id) => log.take(ops(id)));
    expect(writes.count).toBe(before); // not yet: at the turn's end
    await Promise.all(taken);
    expect(writes.count).toBe(before + 1);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual(
      ["a", "b", "c", "d"].map((id) => ops(id)),
    );
  });

  it("refuses, unlogged, a batch LMDB would refuse", async () => {
    const log = new AcceptLog(dir, { commit: lmdb.batch, failed });
    const driver = withAcceptLog(lmdb, log);
    await expect(driver.batch([{ key: "x".repeat(3000), value: "1" }])).rejects.toThrow(
      /key longer than/,
    );
    expect(files()).toEqual([]);
    await log.close();
  });

  it("commits through the driver: what was taken is in LMDB once settled", async () => {
    const log = new AcceptLog(dir, { commit: lmdb.batch, failed });
    const driver = withAcceptLog(lmdb, log);
    await Promise.all([driver.batch(ops("a")), driver.setItem!("events:b", "{}", {})]);
    await log.settled();
    expect(await lmdb.getItem("sessions:a", {})).toBe('{"state":"created"}');
    expect(await lmdb.getItem("events:b", {})).toBe("{}");
    await log.close();
  });

  it("close() writes and commits what was taken in its own turn first", async () => {
    const log = new AcceptLog(dir, { commit: lmdb.batch, failed });
    const taken = log.take(ops("a")); // not yet written when close() comes
    await log.close();
    await taken;
    expect(await lmdb.getItem("sessions:a", {})).toBe('{"state":"created"}');
    expect(files()).toEqual([]); // landed, the file removed
    expect(failures).toEqual([]);
  });
});
