import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import type { ProjectDoc } from "../model/records.ts";
import type { PrepareSpec, Runtime } from "../runtime/runtime.ts";
import { createSecretBox } from "../secrets.ts";
import { createStores } from "../storage/records.ts";
import { createReadiness } from "./readiness.ts";

const T = "2025-06-01T12:00:00.000Z";

/** A runtime that only records what it is asked to prepare; `env` fails until told not to. */
function recordingRuntime() {
  const prepared: PrepareSpec[] = [];
  const state = { envFails: true, envCalls: 0 };
  const runtime: Runtime = {
    check: async () => {},
    run: () => {
      throw new Error("no sessions here");
    },
    async prepareEnvironment() {
      state.envCalls++;
      if (state.envFails) throw new Error("python3 not found");
    },
    async prepare(d) {
      prepared.push(d);
    },
    dispose: async () => {},
  };
  return { runtime, prepared, state };
}

async function setup() {
  const stores = createStores(createStorage({ driver: memory() }));
  const secrets = createSecretBox(randomBytes(32));
  const doc: ProjectDoc = {
    project: {
      id: "prj_1",
      name: "shop",
      env_id: "env_1",
      active_deployment_id: "dep_1",
      created_at: T,
      updated_at: T,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T },
    triggers: [
      { id: "trg_1", name: "a", type: "webhook", call: "handlers.py:on_a" },
      { id: "trg_2", name: "b", type: "webhook", call: null },
    ] as unknown as ProjectDoc["triggers"],
    vars: [{ name: "TOKEN", value: secrets.seal("s3cret"), secret: true }] as ProjectDoc["vars"],
  };
  await stores.projects.put(doc);
  const dep = { project_id: "prj_1", state: "active" as const, created_at: T, updated_at: T };
  await stores.deployments.put({ ...dep, id: "dep_1", build_id: "bld_1" });
  await stores.builds.put({ id: "bld_1", project_id: "prj_1", files: {}, size: 0, created_at: T });
  return { stores, secrets, doc };
}

describe("readiness", () => {
  it("is not ready while the environment fails, tries again when asked, then prepares", async () => {
    const { stores, secrets } = await setup();
    const { runtime, prepared, state } = recordingRuntime();
    const ready = createReadiness({ stores, runtime, secrets, log: silentLogger });
    expect(ready.reason()).toMatch(/preparing/);
    await ready.start();
    expect(ready.reason()).toBe("not ready: python3 not found");
    await ready.idle();
    expect(state.envCalls).toBe(2); // reason() started another attempt
    state.envFails = false;
    ready.reason();
    await ready.idle();
    expect(ready.reason()).toBeNull();
    expect(prepared).toEqual([
      {
        projectId: "prj_1",
        build: { id: "bld_1", files: {} },
        env: { HOOKLINE_PROJECT: "shop", TOKEN: "s3cret" },
        entries: ["handlers.py:on_a"],
      },
    ]);
  });

  it("prepares a changed project's latest deployment, once more if it changed meanwhile", async () => {
    const { stores, secrets, doc } = await setup();
    const { runtime, prepared, state } = recordingRuntime();
    state.envFails = false;
    const ready = createReadiness({ stores, runtime, secrets, log: silentLogger });
    await ready.start();
    prepared.length = 0;
    await stores.builds.put({
      id: "bld_2",
      project_id: "prj_1",
      files: {},
      size: 0,
      created_at: T,
    });
    await stores.deployments.put({
      id: "dep_2",
      project_id: "prj_1",
      build_id: "bld_2",
      state: "active",
      created_at: T,
      updated_at: T,
    });
    await stores.projects.put({
      ...doc,
      project: { ...doc.project, active_deployment_id: "dep_2" },
    });
    ready.project("prj_1");
    ready.project("prj_1");
    ready.project("prj_unknown");
    await ready.idle();
    expect(prepared.map((p) => p.build.id)).toEqual(["bld_2", "bld_2"]);
    expect(ready.reason()).toBeNull();
  });
});
