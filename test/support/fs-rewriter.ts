/**
 * The child of the atomic-replace test in test/harden-reads.test.ts: rewrites one large record
 * of `fs:<dir>` without end, each time with another value, and prints the value's number once
 * its write has returned. The test reads the record meanwhile and SIGKILLs this process.
 *
 *   node --import tsx test/support/fs-rewriter.ts <dir>
 */

import { createStorageFromUrl } from "../../src/storage/driver.ts";
import { rewrittenRecord } from "./fs-record.ts";

const [dir] = process.argv.slice(2);
if (!dir) throw new Error("usage: fs-rewriter.ts <dir>");
const storage = createStorageFromUrl(`fs:${dir}`);

for (let n = 0; n < 1_000_000; n++) {
  await storage.setItem("sessions:rewritten", rewrittenRecord(n));
  process.stdout.write(`${n}\n`);
}
