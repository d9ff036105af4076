import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { eventRecord, sessionRecord } from "../../test/support/records.ts";
import { redisTestUrl, warnIfNoRedis } from "../../test/support/redis.ts";
import { newId } from "../ids.ts";
import { silentLogger } from "../log.ts";
import type { ProjectDoc, SessionRecord } from "../model/records.ts";
import { createStorageFromUrl } from "./driver.ts";
import { capabilitiesOf } from "./drivers/capabilities.ts";
import { FORMAT_KEY, openFormat } from "./format.ts";
import { createStores, type Stores } from "./records.ts";
import { deleteOldSessions } from "./retention.ts";
import { storedJson } from "./stored-json.ts";

/** `dir` is a fresh temporary folder of the test's own, removed after it. */
const drivers: { name: string; url: (dir: string) => string; enabled: boolean }[] = [
  { name: "memory", url: () => "memory:", enabled: true },
  { name: "fs", url: (dir) => `fs:${dir}`, enabled: true },
  { name: "lmdb", url: (dir) => `lmdb:${join(dir, "db")}`, enabled: true },
  { name: "redis", url: redisTestUrl, enabled: warnIfNoRedis("the redis driver contract suite") },
  {
    name: "postgres",
    url: postgresTestUrl,
    enabled: warnIfNoPostgres("the postgres driver contract suite"),
  },
];
afterAll(dropPostgresTestTables);

function projectDoc(name: string): ProjectDoc {
  const t = new Date().toISOString();
  const id = newId("prj");
  const envId = newId("env");
  return {
    project: { id, name, env_id: envId, active_deployment_id: null, created_at: t, updated_at: t },
    env: { id: envId, project_id: id, name: "default", created_at: t },
    triggers: [],
    vars: [],
  };
}

function session(project_id: string, state: SessionRecord["state"]): SessionRecord {
  return sessionRecord({ id: newId("ses"), project_id, event_id: newId("evt"), state });
}

// One contract, every driver: the stores must behave the same whatever holds the bytes.
for (const driver of drivers) {
  describe.skipIf(!driver.enabled)(`stores over ${driver.name}`, () => {
    // Made per test, only when the suite runs: a skipped driver may have no URL at all.
    let dir = "";
    let stores: Stores;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), `hookline-stores-${driver.name}-`));
      stores = createStores(createStorageFromUrl(driver.url(dir)));
    });
    afterEach(async () => {
      await stores.storage.clear();
      await stores.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it("keeps projects by id and by name", async () => {
      const doc = projectDoc("alpha");
      await stores.projects.put(doc);
      expect(await stores.projects.get(doc.project.id)).toEqual(doc);
      expect((await stores.projects.byName("alpha"))?.project.id).toBe(doc.project.id);
      expect(await stores.projects.byName("nope")).toBeNull();
      expect((await stores.projects.list()).map((d) => d.project.name)).toContain("alpha");
    });

    it("lists sessions newest first, by project and state", async () => {
      const a = projectDoc("a").project.id;
      const b = projectDoc("b").project.id;
      const s1 = session(a, "completed");
      const s2 = session(b, "running");
      const s3 = session(a, "running");
      for (const s of [s1, s2, s3]) await stores.sessions.put(s);
      const all = await stores.sessions.list();
      expect(all.slice(0, 3).map((s) => s.id)).toEqual([s3.id, s2.id, s1.id]);
      expect((await stores.sessions.list({ project_id: a })).map((s) => s.id)).toEqual([
        s3.id,
        s1.id,
      ]);
      expect(
        (await stores.sessions.list({ project_id: a, state: "running" })).map((s) => s.id),
      ).toEqual([s3.id]);
      await stores.sessions.put({ ...s3, state: "completed" });
      expect(await stores.sessions.list({ project_id: a, state: "running" })).toEqual([]);
      expect(await stores.sessions.list({ limit: 1 })).toHaveLength(1);
    });

    it("pages the index newest first by a session id cursor, of all or one project, in a state", async () => {
      const a = projectDoc("a").project.id;
      const b = projectDoc("b").project.id;
      const made = [session(a, "completed"), session(b, "running"), session(a, "running")];
      made.push(session(a, "error"), session(b, "completed"));
      for (const s of made) await stores.sessions.put(s);
      const ids = (es: { id: string }[]) => es.map((e) => e.id);
      const [s1, s2, s3, s4, s5] = made.map((s) => s.id) as [
        string,
        string,
        string,
        string,
        string,
      ];
      expect(ids(await stores.sessionIndex.page({ limit: 2 }))).toEqual([s5, s4]);
      expect(ids(await stores.sessionIndex.page({ limit: 2, before: s4 }))).toEqual([s3, s2]);
      expect(ids(await stores.sessionIndex.page({ limit: 9, before: s2 }))).toEqual([s1]);
      expect(ids(await stores.sessionIndex.page({ projectId: a, limit: 9 }))).toEqual([s4, s3, s1]);
      expect(ids(await stores.sessionIndex.page({ projectId: a, limit: 9, before: s3 }))).toEqual([
        s1,
      ]);
      expect(await stores.sessionIndex.page({ state: "running", limit: 9 })).toEqual([
        { project_id: a, state: "running", id: s3 },
        { project_id: b, state: "running", id: s2 },
      ]);
      // `since` bounds the range from below (included), as `before` does from above (not).
      expect(ids(await stores.sessionIndex.page({ limit: 9, since: s2 }))).toEqual([
        s5,
        s4,
        s3,
        s2,
      ]);
      expect(ids(await stores.sessionIndex.page({ limit: 9, since: s2, before: s4 }))).toEqual([
        s3,
        s2,
      ]);
      expect(ids(await stores.sessionIndex.page({ projectId: a, limit: 9, since: s2 }))).toEqual([
        s4,
        s3,
      ]);
      await stores.sessions.put({ ...made[2]!, state: "completed" }, "running");
      expect(
        ids(await stores.sessionIndex.page({ projectId: a, state: "running", limit: 9 })),
      ).toEqual([]);
    });

    it("walks a key range in order, its start included and its end not, where the engine can", async () => {
      const walk = capabilitiesOf(stores.storage).keyRange;
      if (!["memory", "lmdb", "postgres"].includes(driver.name)) {
        expect(walk).toBeUndefined(); // fs and redis list a project's keys whole
        return;
      }
      for (const k of ["r:1", "r:2", "r:3", "r:4", "s:1"]) await stores.storage.setItem(k, 1);
      expect(await walk!({ start: "r:2", end: "r:4" })).toEqual(["r:2", "r:3"]);
      expect(await walk!({ start: "r:2", end: "r:4", reverse: true })).toEqual(["r:3", "r:2"]);
      expect(await walk!({ start: "r:", end: "r;", reverse: true, limit: 2 })).toEqual([
        "r:4",
        "r:3",
      ]);
      expect(await walk!({ start: "r:", end: "r;", limit: 1 })).toEqual(["r:1"]);
      expect(await walk!({ start: "r:5", end: "r;" })).toEqual([]);
    });

    it("lists a session once when a page's reads meet it under two states (its entry moving)", async () => {
      const a = projectDoc("a").project.id;
      const moving = session(a, "completed");
      const other = session(a, "running");
      await stores.sessions.put(moving);
      await stores.sessions.put(other);
      // What a page read state by state can meet while the session ends: both of its entries.
      await stores.storage.setItem(`session-index:${a}:running:${moving.id}`, 1);
      const page = await stores.sessionIndex.page({ projectId: a, limit: 9 });
      expect(page.map((e) => e.id)).toEqual([other.id, moving.id].sort().reverse());
      expect((await stores.sessionIndex.page({ limit: 9 })).length).toBe(2);
    });

    it("reads a page of many sessions as bounded key ranges, without listing the index", async () => {
      if (!capabilitiesOf(stores.storage).keyRange) return; // fs and redis: listed whole
      const p = projectDoc("p").project.id;
      const made = Array.from({ length: 30 }, (_, i) => session(p, i % 3 ? "completed" : "error"));
      await stores.sessions.commitMany(
        made.map((r) => ({ id: r.id, change: { record: r, was: null } })),
      );
      const getKeys = vi.spyOn(stores.storage, "getKeys");
      const page = await stores.sessionIndex.page({ projectId: p, limit: 4, before: made[20]!.id });
      const all = await stores.sessionIndex.page({ limit: 2 });
      expect(getKeys).not.toHaveBeenCalled();
      getKeys.mockRestore();
      expect(page.map((e) => e.id)).toEqual([19, 18, 17, 16].map((i) => made[i]!.id));
      expect(all.map((e) => e.id)).toEqual([made[29]!.id, made[28]!.id]);
    });

    it("lists a project's sessions in one state reading only the index range and what it returns", async () => {
      const p = projectDoc("p").project.id;
      const other = projectDoc("o").project.id;
      const made: SessionRecord[] = [];
      for (let i = 0; i < 6; i++) {
        const s = session(i % 2 ? other : p, i < 4 ? "completed" : "running");
        made.push(s);
        await stores.sessions.put(s, null);
      }
      const getItem = vi.spyOn(stores.storage, "getItem");
      const getKeys = vi.spyOn(stores.storage, "getKeys");
      const done = await stores.sessions.list({ project_id: p, state: "completed", limit: 1 });
      expect(done.map((s) => s.id)).toEqual([made[2]!.id]);
      expect(getItem).toHaveBeenCalledTimes(1); // the one record returned
      // One key range: walked (and stopped at the limit) where the engine can, else listed.
      const listed = capabilitiesOf(stores.storage).keyRange
        ? []
        : [`session-index:${p}:completed`];
      expect(getKeys.mock.calls.map((c) => c[0])).toEqual(listed);
      getItem.mockRestore();
      getKeys.mockRestore();
      expect(
        (await stores.sessions.list({ project_id: p, state: "completed" })).map((s) => s.id),
      ).toEqual([made[2]!.id, made[0]!.id]);
      expect((await stores.sessions.list({ state: "running" })).map((s) => s.id)).toEqual([
        made[5]!.id,
        made[4]!.id,
      ]);
    });

    it("moves a session's index entry with its state, and deletion removes it", async () => {
      const p = projectDoc("p").project.id;
      const s = session(p, "created");
      await stores.sessions.put(s, null);
      await stores.sessions.commit(s.id, {
        record: { ...s, state: "running" },
        was: "created",
        log: [{ t: "now", kind: "state", state: "running" }],
        steps: [{ seq: 0, kind: "sleep" }],
      });
      expect(await stores.sessions.list({ project_id: p, state: "created" })).toEqual([]);
      expect((await stores.sessions.list({ project_id: p, state: "running" }))[0]?.id).toBe(s.id);
      expect(await stores.logs.get(s.id)).toHaveLength(1);
      expect(await stores.journals.list(s.id)).toEqual([{ seq: 0, kind: "sleep" }]);
      // A writer that does not know the stored state still leaves one entry.
      await stores.sessions.put({ ...s, state: "completed" });
      expect(await stores.sessionIndex.entries(p)).toEqual([
        { project_id: p, state: "completed", id: s.id },
      ]);
      await stores.sessions.delete(s.id, p, "completed");
      expect(await stores.sessionIndex.entries(p)).toEqual([]);
      expect(await stores.sessions.get(s.id)).toBeNull();
      expect(await stores.logs.get(s.id)).toEqual([]);
      expect(await stores.journals.list(s.id)).toEqual([]);
    });

    it("retention deletes old ended sessions with their index entries", async () => {
      const p = projectDoc("p").project.id;
      const running = session(p, "running");
      await stores.sessions.put(running, null);
      const ended: SessionRecord[] = [];
      for (let i = 0; i < 12; i++) {
        ended.push(session(p, i % 2 ? "error" : "completed"));
        await stores.sessions.put(ended.at(-1)!, null);
      }
      await deleteOldSessions(stores, p, 10, silentLogger); // a pass with a limit of 10
      const entries = await stores.sessionIndex.entries(p);
      expect(entries).toHaveLength(9);
      expect(entries.map((e) => e.id)).toContain(running.id);
      expect(entries.map((e) => e.id)).not.toContain(ended[0]!.id);
      expect(await stores.sessions.list({ project_id: p, state: "completed" })).toHaveLength(4);
      expect(await stores.sessions.get(ended[0]!.id)).toBeNull();
    });

    it("rewrites index entries of the layout before states were in the key, once (format 3)", async () => {
      const p = projectDoc("p").project.id;
      const s = session(p, "completed");
      await stores.storage.setItem(FORMAT_KEY, 2);
      await stores.storage.setItem(`sessions:${s.id}`, s);
      await stores.storage.setItem(`session-index:${p}:${s.id}`, "completed");
      expect(await openFormat(stores.storage)).toEqual({ from: 2, to: 3 });
      expect((await stores.sessions.list({ project_id: p, state: "completed" }))[0]?.id).toBe(s.id);
      expect(await stores.sessionIndex.entries(p)).toHaveLength(1);
      expect(await stores.storage.getKeys("session-index")).toHaveLength(1);
      expect(await openFormat(stores.storage)).toEqual({ from: 3, to: 3 });
    });

    it("appends journal steps in order and clears them", async () => {
      const id = newId("ses");
      for (let seq = 0; seq < 12; seq++) {
        await stores.journals.append(id, { seq, kind: "outcome" });
      }
      const steps = await stores.journals.list(id);
      expect(steps.map((s) => s.seq)).toEqual([...Array(12).keys()]);
      await stores.journals.clear(id);
      expect(await stores.journals.list(id)).toEqual([]);
    });

    it("keeps a value apart beside its step: listed without it, read in order, deleted with the session", async () => {
      const p = projectDoc("p").project.id;
      const s = session(p, "completed");
      await stores.sessions.put(s, null);
      const parts = ["cGFydCAw", "cGFydCAx", "cGFydCAy"];
      const apart = { field: "result" as const, parts: 3, bytes: 18 };
      await stores.journals.append(s.id, { seq: 0, kind: "outcome" });
      await stores.sessions.commit(s.id, {
        steps: [{ seq: 1, kind: "activity", function: "m.f", apart, parts }],
      });
      await stores.journals.append(s.id, { seq: 2, kind: "outcome" });
      const steps = await stores.journals.list(s.id);
      expect(steps).toEqual([
        { seq: 0, kind: "outcome" },
        { seq: 1, kind: "activity", function: "m.f", apart },
        { seq: 2, kind: "outcome" },
      ]);
      expect(await stores.journals.parts(s.id, 1, 3)).toEqual(parts);
      expect(await stores.journals.parts(s.id, 2, 1)).toEqual([]);
      await stores.sessions.delete(s.id, p, "completed");
      expect(await stores.journals.parts(s.id, 1, 3)).toEqual([]);
      expect(await stores.storage.getKeys(`journals:${s.id}`)).toEqual([]);
    });

    it("stores a session's first commit given as its text the same as its objects, and reads the objects back", async () => {
      const text = { ...sessionRecord(), id: newId("ses") };
      const obj = { ...sessionRecord(), id: newId("ses") };
      const event = eventRecord({ id: newId("evt"), session_id: text.id });
      const texts = { record: storedJson(text), event: storedJson(event) };
      await stores.sessions.commit(text.id, { record: text, was: null, event, texts });
      await stores.sessions.commit(obj.id, { record: obj, was: null });
      expect(await stores.sessions.get(text.id)).toEqual(text);
      expect(await stores.events.get(event.id)).toEqual(event);
      // The text as it is, not encoded once more; the index finds it as it finds the other.
      const raw = await stores.storage.getItemRaw(`sessions:${text.id}`);
      expect(Buffer.from(raw as string).toString()).toBe(texts.record);
      const listed = await stores.sessions.list({ project_id: obj.project_id });
      expect(listed.map((s) => s.id).sort()).toEqual([obj.id, text.id].sort());
    });

    it("keeps logs, webhooks, builds, deployments and events", async () => {
      const sid = newId("ses");
      expect(await stores.logs.get(sid)).toEqual([]);
      await stores.logs.put(sid, [{ t: "now", kind: "print", text: "hi", stream: "stdout" }]);
      expect(await stores.logs.get(sid)).toHaveLength(1);
      await stores.webhooks.put("w".repeat(26), { project_id: "p", trigger_id: "t" });
      expect(await stores.webhooks.get("w".repeat(26))).toEqual({
        project_id: "p",
        trigger_id: "t",
      });
      await stores.webhooks.delete("w".repeat(26));
      expect(await stores.webhooks.get("w".repeat(26))).toBeNull();
      const dep = {
        id: newId("dep"),
        project_id: "prj_x",
        build_id: "bld_x",
        state: "active" as const,
        created_at: "t",
        updated_at: "t",
      };
      await stores.deployments.put(dep);
      expect(await stores.deployments.listByProject("prj_x")).toEqual([dep]);
      const files = { "handlers.py": Buffer.from("x = 1\n").toString("base64") };
      const build = { id: newId("bld"), project_id: "prj_x", files, size: 6, created_at: "t" };
      await stores.builds.put(build);
      expect(await stores.builds.get(build.id)).toEqual(build);
    });
  });
}
