import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  dropPostgresTestTables,
  postgresTestUrl,
  warnIfNoPostgres,
} from "../../test/support/postgres.ts";
import { sessionRecord } from "../../test/support/records.ts";
import { redisTestUrl, warnIfNoRedis } from "../../test/support/redis.ts";
import { newId } from "../ids.ts";
import type { ProjectDoc, SessionRecord } from "../model/records.ts";
import { createStorageFromUrl } from "./driver.ts";
import { createStores, type Stores } from "./stores.ts";

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
