import { describe, expect, it } from "vitest";
import { createStorageFromUrl } from "./driver.ts";
import { atomicBatch } from "./drivers/batch.ts";
import { guardStorage, StorageUnavailable } from "./unavailable.ts";

describe("guardStorage", () => {
  it("turns a failed read or write into StorageUnavailable", async () => {
    const inner = createStorageFromUrl("memory:");
    inner.getItem = () => Promise.reject(new Error("Connection is closed."));
    await expect(guardStorage(inner).getItem("a")).rejects.toBeInstanceOf(StorageUnavailable);
  });

  it("turns a failed atomic commit into StorageUnavailable, and keeps it one commit", async () => {
    const inner = createStorageFromUrl("memory:");
    const storage = guardStorage(inner);
    const ops = [
      { key: "events:evt_1", value: { id: "evt_1" } },
      { key: "sessions:ses_1", value: { id: "ses_1" } },
    ];
    expect(await atomicBatch(storage, ops)).toBe("atomic");
    const driver = inner.getMount("").driver as unknown as { batch: unknown };
    driver.batch = () => Promise.reject(new Error("Reached the max retries per request limit"));
    const failed = atomicBatch(storage, ops);
    await expect(failed).rejects.toBeInstanceOf(StorageUnavailable);
    await expect(failed).rejects.toMatchObject({ cause: { message: /max retries/ } });
  });

  it("gives each key its own mount's driver where something is mounted under the root", async () => {
    const inner = createStorageFromUrl("memory:");
    const other = createStorageFromUrl("memory:");
    inner.mount("cache", other.getMount("").driver);
    const storage = guardStorage(inner);
    // Keys of two mounts: no one commit takes both, so they are written one after the other.
    const ops = [
      { key: "cache:a", value: { id: "a" } },
      { key: "sessions:ses_1", value: { id: "ses_1" } },
    ];
    expect(await atomicBatch(storage, ops)).toBe("sequential");
    expect(await other.getItem("a")).toEqual({ id: "a" });
    expect(await other.getItem("sessions:ses_1")).toBeNull();
    expect(await inner.getItem("sessions:ses_1")).toEqual({ id: "ses_1" });
    // Under the one mount, the root's driver for every key, as unstorage would choose.
    const plain = createStorageFromUrl("memory:");
    expect(guardStorage(plain).getMount("a:b").base).toBe("");
  });
});
