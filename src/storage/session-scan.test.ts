import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionRecord } from "../../test/support/records.ts";
import { idAt } from "../ids.ts";
import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import { createStorageFromUrl } from "./driver.ts";
import { createStores, type Stores } from "./records.ts";
import { scanSessions } from "./session-scan.ts";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-12-06T12:00:00Z");

/** `n` sessions of project `p`, one a minute up to NOW, each printing `line(i)`. */
async function store(stores: Stores, n: number, line: (i: number) => string) {
  const made: SessionRecord[] = [];
  const changes = [];
  for (let i = 0; i < n; i++) {
    const when = NOW - (n - i) * 60_000;
    const id = `${idAt("ses", when).slice(0, -4)}${String(i).padStart(4, "0")}`;
    const rec = sessionRecord({ id, project_id: "prj_p", event_id: `evt_${id.slice(4)}` });
    const log: SessionLogEntry[] = [
      { t: new Date(when).toISOString(), kind: "print", text: line(i), stream: "stdout" },
    ];
    made.push(rec);
    changes.push({ id, change: { record: rec, was: null, log } });
  }
  await stores.sessions.commitMany(changes);
  return made;
}

describe("scanning the session index for a search", () => {
  let stores: Stores;
  let read: string[];
  const record = (id: string) => {
    read.push(id);
    return stores.sessions.get(id);
  };
  const log = (id: string) => stores.logs.get(id);
  beforeEach(() => {
    stores = createStores(createStorageFromUrl("memory:"));
    read = [];
  });
  afterEach(() => stores.dispose());

  it("stops reading records once a text search's page is full, and 'more' goes on from there", async () => {
    const made = await store(stores, 500, (i) => `order ${i} ok`);
    const first = await scanSessions(
      stores.sessionIndex,
      record,
      { search: "OK" },
      {
        limit: 10,
        budget: 1000,
        log,
      },
    );
    expect(first.sessions.map((s) => s.id)).toEqual(
      made
        .slice(490)
        .reverse()
        .map((s) => s.id),
    );
    expect(first.next).toBe(made[490]!.id);
    expect(read.length).toBeLessThanOrEqual(100); // the first chunk, not the budget
    const second = await scanSessions(
      stores.sessionIndex,
      record,
      { search: "ok", cursor: first.next! },
      { limit: 10, budget: 1000, log },
    );
    expect(second.sessions.map((s) => s.id)).toEqual(
      made
        .slice(480, 490)
        .reverse()
        .map((s) => s.id),
    );
  });

  it("reads at most its budget of sessions a request, and says where to go on", async () => {
    const made = await store(stores, 500, (i) => (i % 100 === 0 ? `needle ${i}` : "hay"));
    const q = { search: "needle" };
    const page = await scanSessions(stores.sessionIndex, record, q, {
      limit: 50,
      budget: 150,
      log,
    });
    expect(page.sessions.map((s) => s.id)).toEqual([made[400]!.id]);
    expect(page.scanned).toBe(150);
    expect(read.length).toBe(150);
    expect(page.next).toBe(made[350]!.id);
    const rest = await scanSessions(
      stores.sessionIndex,
      record,
      { ...q, cursor: page.next! },
      {
        limit: 50,
        budget: 1000,
        log,
      },
    );
    expect(rest.sessions.map((s) => s.id)).toEqual([300, 200, 100, 0].map((i) => made[i]!.id));
    expect(rest.next).toBeNull();
  });

  it("reads no session older than the time range's start", async () => {
    const made = await store(stores, 300, () => "same text"); // five hours, one a minute
    const since = NOW - HOUR;
    const page = await scanSessions(
      stores.sessionIndex,
      record,
      { search: "same", since },
      {
        limit: 200,
        budget: 1000,
        log,
      },
    );
    expect(page.sessions).toHaveLength(60);
    expect(page.next).toBeNull();
    expect(read.every((id) => id >= idAt("ses", since))).toBe(true);
    expect(read).not.toContain(made[239]!.id);
  });

  it("looks for an event's sessions no further back than a few minutes before the event", async () => {
    const made = await store(stores, 300, () => "x");
    const target = made[200]!; // 100 minutes before the newest
    const page = await scanSessions(
      stores.sessionIndex,
      record,
      { search: target.event_id },
      { limit: 50, budget: 1000, log },
    );
    expect(page.sessions.map((s) => s.id)).toEqual([target.id]);
    expect(page.next).toBeNull();
    // The 100 newer sessions and the five minutes before the event, not the 195 older ones.
    expect(read.length).toBeLessThanOrEqual(106);
    expect(read).not.toContain(made[190]!.id);
  });
});
