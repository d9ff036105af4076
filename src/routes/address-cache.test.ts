import { beforeEach, describe, expect, it } from "vitest";
import { T, triggerRecord } from "../../test/support/records.ts";
import type { ConnectionRecord, ProjectDoc, TriggerRecord } from "../model/records.ts";
import { createStorageFromUrl } from "../storage/driver.ts";
import { createStores, type Stores } from "../storage/records.ts";
import { createAddressCache } from "./address-cache.ts";

const WEBHOOK = "w".repeat(26);

function trigger(over: Partial<TriggerRecord> = {}): TriggerRecord {
  const hook = {
    id: "trg_1",
    webhook_id: WEBHOOK,
    event_type: "post",
    call: "handlers.py:on_post",
  };
  return triggerRecord("hook", { ...hook, ...over });
}

function doc(triggers: TriggerRecord[], active: string | null = "dep_1"): ProjectDoc {
  return {
    project: {
      id: "prj_1",
      name: "demo",
      env_id: "env_1",
      active_deployment_id: active,
      created_at: T,
      updated_at: T,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T },
    vars: [],
    triggers,
  };
}

let stores: Stores;
let clock: number;
const now = () => clock;

beforeEach(async () => {
  stores = createStores(createStorageFromUrl("memory:"));
  clock = 1_000_000;
  await stores.deployments.put({
    id: "dep_1",
    project_id: "prj_1",
    build_id: "bld_1",
    state: "active",
    created_at: T,
    updated_at: T,
  });
});

async function deployed(rec: TriggerRecord) {
  await stores.projects.put(doc([rec]));
  await stores.webhooks.put(rec.webhook_id, { project_id: "prj_1", trigger_id: rec.id });
}

describe("address cache", () => {
  it("resolves a webhook id to its trigger, deployment and build", async () => {
    await deployed(trigger());
    const hit = await createAddressCache(stores, 0, now).get(WEBHOOK);
    expect(hit?.trigger?.name).toBe("hook");
    expect(hit?.deploymentId).toBe("dep_1");
    expect(hit?.buildId).toBe("bld_1");
    expect(hit?.doc.project.name).toBe("demo");
  });

  it("answers null when the project has no active deployment", async () => {
    const rec = trigger();
    await stores.projects.put(doc([rec], null));
    await stores.webhooks.put(WEBHOOK, { project_id: "prj_1", trigger_id: rec.id });
    expect(await createAddressCache(stores, 0, now).get(WEBHOOK)).toBeNull();
  });

  it("with ttl 0 keeps a hit however much time passes, until the project is invalidated", async () => {
    await deployed(trigger());
    const cache = createAddressCache(stores, 0, now);
    await cache.get(WEBHOOK);
    await deployed(trigger({ call: "handlers.py:changed" }));
    clock += 24 * 3600_000;
    expect((await cache.get(WEBHOOK))?.trigger?.call).toBe("handlers.py:on_post");
    cache.invalidate("prj_other");
    expect((await cache.get(WEBHOOK))?.trigger?.call).toBe("handlers.py:on_post");
    cache.invalidate("prj_1");
    expect((await cache.get(WEBHOOK))?.trigger?.call).toBe("handlers.py:changed");
  });

  it("with a ttl reads storage again once the ttl has passed, not before", async () => {
    await deployed(trigger());
    const cache = createAddressCache(stores, 5000, now);
    await cache.get(WEBHOOK);
    await deployed(trigger({ call: "handlers.py:changed" }));
    clock += 4999;
    expect((await cache.get(WEBHOOK))?.trigger?.call).toBe("handlers.py:on_post");
    clock += 1;
    expect((await cache.get(WEBHOOK))?.trigger?.call).toBe("handlers.py:changed");
  });

  it("remembers an unknown id for one second, or until any invalidation", async () => {
    const cache = createAddressCache(stores, 0, now);
    expect(await cache.get(WEBHOOK)).toBeNull();
    await deployed(trigger());
    clock += 999;
    expect(await cache.get(WEBHOOK)).toBeNull(); // still the cached miss
    clock += 1;
    expect((await cache.get(WEBHOOK))?.trigger?.name).toBe("hook");

    const other = "x".repeat(26);
    expect(await cache.get(other)).toBeNull();
    await deployed(trigger({ id: "trg_2", name: "other", webhook_id: other }));
    cache.invalidate("prj_unrelated"); // a new trigger anywhere may fill a cached miss
    expect((await cache.get(other))?.trigger?.name).toBe("other");
  });

  it("resolves a connection's inbound id to its connection, and only while it keeps that id", async () => {
    const INBOUND = "i".repeat(26);
    const gh: ConnectionRecord = {
      id: "con_1",
      name: "gh",
      integration: "github",
      inbound_id: INBOUND,
      created_at: T,
      updated_at: T,
    };
    await stores.projects.put({ ...doc([trigger()]), connections: [gh] });
    await stores.webhooks.put(INBOUND, { project_id: "prj_1", trigger_id: "", connection: "gh" });
    const cache = createAddressCache(stores, 0, now);
    const hit = await cache.get(INBOUND);
    expect(hit?.connection?.name).toBe("gh");
    expect(hit?.trigger).toBeNull();
    expect(hit?.buildId).toBe("bld_1");
    await stores.projects.put({ ...doc([trigger()]), connections: [{ ...gh, inbound_id: "n" }] });
    cache.invalidate("prj_1");
    expect(await cache.get(INBOUND)).toBeNull();
  });
});
