import { randomBytes } from "node:crypto";
import { createStorage, prefixStorage } from "unstorage";
import { describe, expect, it } from "vitest";
import { sessionRecord, T } from "../../test/support/records.ts";
import { HooklineError } from "../errors.ts";
import type { ProjectDoc } from "../model/records.ts";
import { createSecretBox } from "../secrets.ts";
import { memoryDriver } from "./drivers/memory.ts";
import { checkSecretKey, KEY_CHECK, META_NAMESPACE } from "./key-check.ts";
import { createStores } from "./records.ts";

const store = () => createStorage({ driver: memoryDriver() });

function projectDoc(vars: ProjectDoc["vars"]): ProjectDoc {
  return {
    project: {
      id: "prj_1",
      name: "shop",
      env_id: "env_1",
      active_deployment_id: "dep_1",
      created_at: T,
      updated_at: T,
    },
    env: { id: "env_1", project_id: "prj_1", name: "default", created_at: T },
    triggers: [],
    vars,
  } as ProjectDoc;
}

async function refusal(p: Promise<unknown>): Promise<HooklineError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HooklineError);
  return err as HooklineError;
}

describe("the secret key's check value", () => {
  it("is written on a new store, then verified with the same key", async () => {
    const storage = store();
    const key = randomBytes(32);
    expect(await checkSecretKey(storage, key)).toBe("written");
    const kept = await prefixStorage(storage, META_NAMESPACE).getItem<{ value: string }>(KEY_CHECK);
    expect(kept?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(kept?.value).not.toContain(key.toString("hex")); // a check, never the key
    expect(await checkSecretKey(storage, Buffer.from(key))).toBe("verified");
  });

  it("refuses another key with a coded error naming SVC_SECRET_KEY, and changes nothing", async () => {
    const storage = store();
    await checkSecretKey(storage, randomBytes(32));
    const before = await storage.getItem(`${META_NAMESPACE}:${KEY_CHECK}`);
    const err = await refusal(checkSecretKey(storage, randomBytes(32)));
    expect(err.code).toBe("conflict");
    expect(err.message).toMatch(/^SVC_SECRET_KEY does not match/);
    expect(err.extra).toEqual({ setting: "SVC_SECRET_KEY" });
    expect(await storage.getItem(`${META_NAMESPACE}:${KEY_CHECK}`)).toEqual(before);
  });

  describe("a store written before checks", () => {
    it("with a secret var: verified against it, then the check is written", async () => {
      const key = randomBytes(32);
      const storage = store();
      const doc = projectDoc([
        { name: "TOKEN", value: createSecretBox(key).seal("s3cret"), secret: true },
      ] as ProjectDoc["vars"]);
      await createStores(storage).projects.put(doc);
      const err = await refusal(checkSecretKey(storage, randomBytes(32)));
      expect(err.message).toMatch(/secret var shop\/TOKEN does not open with it/);
      expect(await storage.hasItem(`${META_NAMESPACE}:${KEY_CHECK}`)).toBe(false);
      expect(await checkSecretKey(storage, key)).toBe("written");
      expect(await checkSecretKey(storage, key)).toBe("verified");
    });

    it("with a running durable session's sealed journal only: verified against that", async () => {
      const key = randomBytes(32);
      const storage = store();
      const stores = createStores(storage);
      await stores.projects.put(projectDoc([]));
      const record = sessionRecord({ id: "ses_1", project_id: "prj_1", state: "running" });
      const sealed = `sealed:${createSecretBox(key).seal("gASVBQAAAAAAAACMATGULg==")}`;
      await stores.sessions.commit("ses_1", {
        record,
        was: null,
        steps: [{ seq: 1, kind: "activity", name: "f", result: sealed } as never],
      });
      const err = await refusal(checkSecretKey(storage, randomBytes(32)));
      expect(err.message).toMatch(/the journal of ses_1 does not open with it/);
      expect(await checkSecretKey(storage, key)).toBe("written");
    });

    it("with nothing sealed: any key becomes the store's", async () => {
      const storage = store();
      await createStores(storage).projects.put(
        projectDoc([{ name: "PLAIN", value: "x", secret: false }] as ProjectDoc["vars"]),
      );
      const key = randomBytes(32);
      expect(await checkSecretKey(storage, key)).toBe("written");
      await refusal(checkSecretKey(storage, randomBytes(32)));
    });
  });
});
