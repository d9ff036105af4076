import { describe, expect, it } from "vitest";
import { manualClock } from "../../test/support/clock.ts";
import { fakeFleet } from "../../test/support/owners.ts";
import { sessionRecord } from "../../test/support/records.ts";
import { silentLogger } from "../log.ts";
import type { SessionLogEntry } from "../model/records.ts";
import type { SessionChange } from "../storage/record-types.ts";
import { SessionLog } from "./session-log.ts";
import { LOG_FLUSH_MS, SessionWriter } from "./writer.ts";

/** Stores that note every write, and can be held to let writes pile up. */
function recordingStores() {
  const writes: string[] = [];
  let hold: Promise<void> | null = null;
  const stores = {
    sessions: {
      async commit(id: string, change: SessionChange) {
        if (hold) await hold;
        for (const step of change.steps ?? []) writes.push(`step ${id} ${step.seq}`);
        if (change.log) writes.push(`log ${id} ${change.log.length}`);
        if (change.record) writes.push(`record ${id} ${change.record.state}`);
        if (change.own) writes.push(`own ${id} ${change.own.kind}`);
      },
    },
  };
  return {
    writes,
    stores: stores as never,
    hold() {
      let release = () => {};
      hold = new Promise((r) => {
        release = () => {
          hold = null;
          r();
        };
      });
      return release;
    },
  };
}

const entry = (text: string): SessionLogEntry => ({ t: "", kind: "print", text, stream: "stdout" });

describe("SessionWriter", () => {
  it("writes a changed log behind, within the flush interval and not before", async () => {
    const clock = manualClock();
    const { writes, stores } = recordingStores();
    const writer = new SessionWriter({ stores, log: silentLogger, clock });
    const log = new SessionLog();
    writer.open(sessionRecord({ id: "ses_1" }), log);
    log.append(entry("a"));
    log.append(entry("b"));
    await clock.advance(LOG_FLUSH_MS - 1);
    expect(writes).toEqual([]);
    await clock.advance(1);
    expect(writes).toEqual(["log ses_1 2"]);
    await clock.advance(LOG_FLUSH_MS * 5);
    expect(writes).toEqual(["log ses_1 2"]); // nothing changed since
  });

  it("writes the log before the record, in order per session", async () => {
    const clock = manualClock();
    const { writes, stores } = recordingStores();
    const writer = new SessionWriter({ stores, log: silentLogger, clock });
    const record = sessionRecord({ id: "ses_1", state: "created" });
    const log = new SessionLog();
    writer.open(record, log);
    writer.persist("ses_1");
    await writer.written("ses_1");
    record.state = "completed";
    log.append(entry("x"));
    writer.persist("ses_1");
    await writer.close("ses_1");
    expect(writes).toEqual(["record ses_1 created", "log ses_1 1", "record ses_1 completed"]);
    // Forgotten once closed and written: a later persist writes nothing.
    writer.persist("ses_1");
    await writer.idle();
    expect(writes).toHaveLength(3);
    await clock.advance(LOG_FLUSH_MS * 2);
    expect(writes).toHaveLength(3); // closed: no timed flush any more
  });

  it("keeps at most one write waiting behind the running one, with what is current", async () => {
    const { writes, stores, hold } = recordingStores();
    const writer = new SessionWriter({ stores, log: silentLogger, clock: manualClock() });
    const record = sessionRecord({ id: "ses_1", state: "created" });
    writer.open(record, new SessionLog());
    const release = hold();
    writer.persist("ses_1"); // running, held
    await new Promise((r) => setImmediate(r));
    for (const state of ["running", "error", "completed"] as const) {
      record.state = state;
      writer.persist("ses_1");
    }
    release();
    await writer.idle();
    expect(writes).toEqual(["record ses_1 created", "record ses_1 completed"]);
  });

  it("writes nothing of a session opened after a first write still on its way until it lands; what was asked meanwhile goes as one", async () => {
    const { writes, stores } = recordingStores();
    const writer = new SessionWriter({ stores, log: silentLogger, clock: manualClock() });
    let land = () => {};
    const landed = new Promise<void>((r) => (land = r));
    const record = sessionRecord({ id: "ses_1", state: "created" });
    const log = new SessionLog();
    writer.open(record, log, "created", landed);
    record.state = "running";
    writer.persist("ses_1");
    log.append({ t: "t", kind: "print", text: "hi", stream: "stdout" });
    record.state = "completed";
    writer.persist("ses_1");
    await new Promise((r) => setTimeout(r, 20));
    expect(writes).toEqual([]);
    land();
    await writer.idle();
    expect(writes).toEqual(["log ses_1 1", "record ses_1 completed"]);
  });

  it("a failed write is logged, and later writes still happen", async () => {
    const errors: string[] = [];
    let fail = true;
    const stores = {
      sessions: {
        commit: async () => {
          if (fail) throw new Error("disk full");
        },
      },
    };
    const writer = new SessionWriter({
      stores: stores as never,
      log: { ...silentLogger, error: (m: string) => void errors.push(m) },
      clock: manualClock(),
    });
    writer.open(sessionRecord({ id: "ses_1" }), new SessionLog());
    writer.persist("ses_1");
    await writer.written("ses_1");
    fail = false;
    writer.persist("ses_1");
    await writer.written("ses_1");
    expect(errors).toEqual(["session ses_1: write failed"]);
    fail = true;
    await expect(writer.journal("ses_1", { seq: 0, kind: "sleep" })).rejects.toThrow("disk full");
  });

  it("commits a journal step with the state change queued meanwhile, and moves the index once", async () => {
    const commits: SessionChange[] = [];
    const { stores, hold } = recordingStores();
    const inner = (stores as { sessions: { commit(id: string, c: SessionChange): Promise<void> } })
      .sessions;
    const writer = new SessionWriter({
      stores: {
        sessions: {
          commit: async (id: string, c: SessionChange) => {
            commits.push(c);
            await inner.commit(id, c);
          },
        },
      } as never,
      log: silentLogger,
      clock: manualClock(),
    });
    const record = sessionRecord({ id: "ses_1", state: "created" });
    const log = new SessionLog();
    writer.open(record, log, null);
    const release = hold();
    writer.persist("ses_1"); // created: running, held
    await new Promise((r) => setImmediate(r));
    record.state = "running";
    log.append(entry("state"));
    writer.persist("ses_1");
    const stored = writer.journal("ses_1", { seq: 0, kind: "sleep" });
    release();
    await stored;
    await writer.written("ses_1");
    expect(commits.map((c) => [c.record?.state, c.was, c.steps?.length, c.log?.length])).toEqual([
      ["created", null, 0, undefined],
      ["running", "created", 1, 1],
    ]);
    writer.persist("ses_1");
    await writer.written("ses_1");
    expect(commits[2]?.was).toBe("running"); // same state: the store leaves the index alone
  });

  it("in a fleet: a new session's first write makes its owner row; one that fails forgets it", async () => {
    const { writes, stores } = recordingStores();
    const fleet = fakeFleet();
    const writer = new SessionWriter({ stores, log: silentLogger, owners: fleet.owners });
    await writer.create(sessionRecord({ id: "ses_1", state: "created" }));
    expect(writes).toEqual(["record ses_1 created", "own ses_1 own"]);
    expect(fleet.owners.holds("ses_1")).toBe(true);

    const inner = (stores as { sessions: { commit(): Promise<void> } }).sessions;
    inner.commit = async () => {
      throw new Error("storage down");
    };
    await expect(writer.create(sessionRecord({ id: "ses_2" }))).rejects.toThrow();
    expect(fleet.owners.holds("ses_2")).toBe(false);
  });

  it("writes nothing more of a discarded session: queued writes dropped, a journal step refused", async () => {
    const clock = manualClock();
    const { writes, stores, hold } = recordingStores();
    const writer = new SessionWriter({ stores, log: silentLogger, clock });
    const record = sessionRecord({ id: "ses_1", state: "running" });
    const log = new SessionLog();
    writer.open(record, log);
    const release = hold();
    writer.persist("ses_1"); // under way when the session is discarded: it finishes
    await new Promise((r) => setImmediate(r));
    log.append(entry("a"));
    writer.persist("ses_1"); // queued behind it: dropped
    writer.discard("ses_1");
    const step = { seq: 0, kind: "activity", function: "m.f", result: "" } as never;
    const refused = writer.journal("ses_1", step).then(
      () => "stored",
      () => "refused",
    );
    release();
    await writer.written("ses_1");
    await clock.advance(LOG_FLUSH_MS * 3);
    expect(writes).toEqual(["record ses_1 running"]);
    expect(await refused).toBe("refused");
  });

  it("tries an ended session's failed last write again until storage takes it; written waits", async () => {
    const clock = manualClock();
    const { writes, stores } = recordingStores();
    const inner = (stores as { sessions: { commit(id: string, c: SessionChange): Promise<void> } })
      .sessions;
    const commit = inner.commit.bind(inner);
    let refusals = 3;
    inner.commit = async (id, c) => {
      if (refusals-- > 0) throw new Error("storage unavailable");
      return commit(id, c);
    };
    const writer = new SessionWriter({ stores, log: silentLogger, clock });
    const record = sessionRecord({ id: "ses_1", state: "running" });
    writer.open(record, new SessionLog(), "running");
    record.state = "completed";
    writer.persist("ses_1");
    let stored = false;
    const closed = writer.close("ses_1").then(() => (stored = true));
    for (const wait of [100, 200, 400]) {
      await clock.advance(wait - 1);
      expect(stored, `still waiting ${wait} ms after a refusal`).toBe(false);
      await clock.advance(1);
    }
    await closed;
    expect(writes).toEqual(["record ses_1 completed"]);
    await writer.written("ses_1"); // forgotten once stored
    expect(clock.pending()).toBe(0);
  });
});
