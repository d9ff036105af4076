/**
 * The child of test/storage-crash.test.ts: writes keys to `lmdb:<dir>` without end, and prints
 * each key on its own line only after its write (or atomic batch) has returned. The test
 * SIGKILLs it mid-stream.
 *
 *   node --import tsx test/support/storage-crash-writer.ts <dir> <round>
 */

import { createStorageFromUrl } from "../../src/storage/driver.ts";
import { atomicBatch } from "../../src/storage/drivers/batch.ts";

const [dir, round = "0"] = process.argv.slice(2);
if (!dir) throw new Error("usage: storage-crash-writer.ts <dir> <round>");
const storage = createStorageFromUrl(`lmdb:${dir}`);
const pad = "x".repeat(250);

/** The value the test expects under `key`. */
const recordOf = (key: string) => ({ key, pad });

for (let i = 0; i < 1_000_000; i++) {
  const id = `${round}-${String(i).padStart(7, "0")}`;
  if (i % 5 === 4) {
    // Every fifth step is a 3-key atomic batch, printed once the batch returned.
    const keys = [`crash:${id}:a`, `crash:${id}:b`, `crash-index:${id}`];
    await atomicBatch(
      storage,
      keys.map((key) => ({ key, value: recordOf(key) })),
    );
    process.stdout.write(`${keys.join("\n")}\n`);
  } else {
    const key = `crash:${id}`;
    await storage.setItem(key, recordOf(key));
    process.stdout.write(`${key}\n`);
  }
}
