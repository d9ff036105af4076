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
});
