import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { sessionRecord } from "../../test/support/records.ts";
import { PgCoordinator } from "../cluster/pg-coordinator.ts";
import { silentLogger } from "../log.ts";
import type { SessionRecord } from "../model/records.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { postgresTarget } from "../storage/drivers/postgres.ts";
import { ownerTables } from "../storage/drivers/postgres-owners.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { SessionLog } from "./session-log.ts";
import { SessionWriter } from "./writer.ts";

/**
 * The window a client-side fence cannot close, made deterministic: instance A builds a session's
 * last write and stalls before sending it (a pause point in its store, between the writer's
 * change and the statement); meanwhile A is declared dead, B takes the session over and ends it;
 * then A's write goes out. PostgreSQL must refuse it: B's end is the one on record.
 */
describe.skipIf(!warnIfNoPostgres("the fenced writer test"))(
  "a write sent after a takeover",
  () => {
    const open: { dispose(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const o of open.splice(0).reverse()) await o.dispose();
    });
    afterAll(dropPostgresTestTables);

    /** Stores whose session commits wait at `hold` once it is armed, after the write was built. */
    function pausable(stores: Stores) {
      let hold: Promise<void> | null = null;
      let reached: () => void = () => {};
      const real = stores.sessions.commit;
      const paused: Stores = {
        ...stores,
        sessions: {
          ...stores.sessions,
          commit: async (id, change) => {
            if (hold) {
              reached();
              await hold;
            }
            return real(id, change);
          },
        },
      };
      return {
        stores: paused,
        /** Arms the pause; resolves `atPause` once a write reaches it; `go` lets it through. */
        arm() {
          let go: () => void = () => {};
          hold = new Promise((r) => {
            go = r;
          });
          const atPause = new Promise<void>((r) => {
            reached = r;
          });
          return {
            atPause,
            go: () => {
              hold = null;
              go();
            },
          };
        },
      };
    }

    it("stores B's end only, under one index entry, and A is told it was fenced", async () => {
      const url = postgresTestUrl();
      const target = postgresTarget(url)!;
      const lost: [string, string][] = [];
      const instance = async (name: string) => {
        const storage = createStorageFromUrl(url);
        open.push({ dispose: () => storage.dispose() });
        await storage.getItem("meta:probe"); // makes the tables
        const owners = new PgCoordinator({
          ...target,
          bus: true,
          leaseMs: 60_000,
          onLost: (id, why) => lost.push([`${name} ${id}`, why]),
        });
        await owners.start();
        open.push(owners);
        return { stores: createStores(storage), owners };
      };
      const a = await instance("A");
      const b = await instance("B");
      const pause = pausable(a.stores);
      const writerA = new SessionWriter({
        stores: pause.stores,
        log: silentLogger,
        owners: a.owners,
      });
      const writerB = new SessionWriter({ stores: b.stores, log: silentLogger, owners: b.owners });

      // Accepted and queued; A takes it and runs it.
      const record = sessionRecord({ id: "ses_window", state: "created" });
      const own = a.owners.enqueue(record.id);
      await a.stores.sessions.commit(record.id, { record, was: null, own });
      expect((await a.owners.take())?.id).toBe(record.id);
      const ranOnA: SessionRecord = { ...record, state: "running" };
      writerA.open(ranOnA, new SessionLog(), "created");
      writerA.persist(record.id);
      await writerA.written(record.id);

      // A ends it and builds that write, then stalls before sending it.
      const { atPause, go } = pause.arm();
      Object.assign(ranOnA, { state: "completed", ended_at: new Date().toISOString() });
      writerA.persist(record.id);
      const aDone = writerA.close(record.id);
      await atPause;

      // A is declared dead by the database's clock; B takes the session and ends it.
      const pool = new pg.Pool({ connectionString: target.url, max: 1 });
      open.push({ dispose: () => pool.end() });
      const { instances } = ownerTables(target.table);
      const staleA = `UPDATE ${instances} SET heartbeat_at = now() - interval '1 hour' WHERE id = $1`;
      await pool.query(staleA, [a.owners.owner]);
      expect(await b.owners.reap()).toBe(1);
      expect((await b.owners.take())?.id).toBe(record.id);
      const onB = (await b.stores.sessions.get(record.id))!;
      expect(onB.state).toBe("running");
      writerB.open(onB, new SessionLog(), undefined);
      Object.assign(onB, {
        state: "error",
        error: { message: "interrupted", traceback: "" },
        ended_at: new Date().toISOString(),
      });
      writerB.persist(record.id);
      await writerB.close(record.id);

      // A's write goes out now, and is refused.
      go();
      await aDone;
      const stored = await b.stores.sessions.get(record.id);
      expect(stored?.state).toBe("error");
      expect(stored?.error?.message).toBe("interrupted");
      const entries = await b.stores.sessionIndex.entries(record.project_id);
      expect(entries).toEqual([{ project_id: record.project_id, state: "error", id: record.id }]);
      expect(lost).toEqual([[`A ${record.id}`, "fenced"]]);
    });
  },
);
