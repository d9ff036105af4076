import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ACCEPT_LOG_BACKLOG,
  AcceptLog,
  readAcceptLog,
  replayAcceptLogs,
  withAcceptLog,
} from "./accept-log.ts";
import { type BatchDriver, lmdbDriver } from "./drivers/lmdb.ts";

/** A commit held until the test lets it land (or fail). */
function heldCommits() {
  const held: { land: () => void; fail: (e: Error) => void }[] = [];
  const commit = () =>
    new Promise<void>((land, fail) => {
      held.push({ land, fail });
    });
  return { held, commit };
}

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

  it("returns once the batch is written, before its commit; empties the file once it lands", async () => {
    const log = new AcceptLog(dir, (e) => failures.push(e));
    const { held, commit } = heldCommits();
    await log.take(ops("a"), commit); // resolves with the commit still held
    expect(held).toHaveLength(1);
    expect(log.inFlight).toBe(1);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("a")]);
    let after = false;
    log.after(() => {
      after = true;
    });
    await Promise.resolve();
    expect(after).toBe(false); // waits for the landing
    held[0]!.land();
    await log.settled();
    expect(after).toBe(true);
    expect(sizes()).toEqual([0]);
    await log.close();
    expect(files()).toEqual([]);
  });

  it("keeps a batch whose commit failed, says so, and makes later writes wait for theirs", async () => {
    const log = new AcceptLog(dir, (e) => failures.push(e));
    const { held, commit } = heldCommits();
    await log.take(ops("a"), commit);
    held[0]!.fail(new Error("MDB_MAP_FULL"));
    await log.settled();
    expect(failures.map(String)).toEqual(["Error: MDB_MAP_FULL"]);
    let settled = false;
    const next = log.take(ops("b"), commit).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false); // no longer answered before its commit
    held[1]!.land();
    await next;
    await log.close();
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("a")]); // for the next start
  });

  it(`waits for the commit again once ${ACCEPT_LOG_BACKLOG} batches are in flight`, async () => {
    const log = new AcceptLog(dir, () => {});
    const { held, commit } = heldCommits();
    for (let i = 0; i < ACCEPT_LOG_BACKLOG; i++) await log.take(ops(`s${i}`), commit);
    let settled = false;
    const over = log.take(ops("over"), commit).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    for (const h of held) h.land();
    // The one past the bound is committed (after those before it) before its write returns.
    while (held.length === ACCEPT_LOG_BACKLOG) await new Promise((r) => setTimeout(r, 1));
    expect(settled).toBe(false);
    held.at(-1)!.land();
    await over;
    expect(log.inFlight).toBe(0);
    await log.close();
  });

  it("seals a full file and removes it once every batch in it has landed", async () => {
    const log = new AcceptLog(dir, () => {});
    const { held, commit } = heldCommits();
    const big = `,"pad":"${"x".repeat(1024 * 1024)}"`;
    for (let i = 0; i < 5; i++) await log.take(ops(`s${i}`, big), commit);
    expect(files()).toHaveLength(2); // three in the first (a fourth would pass 4 MiB), two after
    held[0]!.land();
    held[1]!.land();
    held[3]!.land();
    await new Promise((r) => setTimeout(r, 0));
    expect(files()).toHaveLength(2);
    held[2]!.land();
    await new Promise((r) => setTimeout(r, 0));
    expect(files()).toHaveLength(1); // the sealed one gone
    held[4]!.land();
    await log.close();
    expect(files()).toEqual([]);
  });

  it("replays a gone writer's batches that never landed, skips those that did, stops at a torn tail", async () => {
    const log = new AcceptLog(dir, () => {});
    const never = () => new Promise<void>(() => {}); // killed before any commit
    const driver = withAcceptLog({ ...lmdb, batch: never }, log);
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
    const log = new AcceptLog(dir, () => {});
    const never = () => new Promise<void>(() => {});
    for (const id of ["a", "b", "c"]) await log.take(ops(id), never);
    const path = join(dir, files()[0]!);
    truncateSync(path, statSync(path).size - 1);
    expect(readAcceptLog(path)).toEqual([ops("a"), ops("b")]);
  });

  it("a batch it cannot write waits for its commit, and the next goes to a new file", async () => {
    const log = new AcceptLog(dir, () => {});
    const { held, commit } = heldCommits();
    await log.take(ops("a"), commit);
    const first = files()[0];
    const unwritable = [{ key: "events:b", value: 1n as unknown as string }]; // no JSON for it
    let settled = false;
    const b = log.take(unwritable, commit).then(() => {
      settled = true;
    });
    held[0]!.land();
    while (held.length < 2) await new Promise((r) => setTimeout(r, 1));
    expect(settled).toBe(false);
    held[1]!.land();
    await b;
    await log.take(ops("c"), commit);
    // A failed write may leave a part of its batch: that file takes no more (removed, as a
    // landed), and c starts a new one.
    expect(files()).toHaveLength(1);
    expect(files()[0]).not.toBe(first);
    expect(readAcceptLog(join(dir, files()[0]!))).toEqual([ops("c")]);
    held[2]!.land();
    await log.close();
  });

  it("refuses, unlogged, a batch LMDB would refuse", async () => {
    const log = new AcceptLog(dir, () => {});
    const driver = withAcceptLog(lmdb, log);
    await expect(driver.batch([{ key: "x".repeat(3000), value: "1" }])).rejects.toThrow(
      /key longer than/,
    );
    expect(files()).toEqual([]);
    await log.close();
  });
});
