import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import type { BatchOp } from "./drivers/lmdb.ts";

// An accept log's entries (./accept-log.ts): a turn's written with one `write`, read back at a start.

const HEAD = 8; // u32 length, u32 CRC-32 of the batch that follows
/**
 * A batch's first byte: its ops as lengths and bytes (`encodeBatch`). An entry an earlier version
 * wrote is the ops' JSON, whose first byte is `[`.
 */
const BINARY = 0x01;
const JSON_ARRAY = 0x5b;
/** The most the buffer entries are encoded in is kept at, between writes. */
const SCRATCH_MAX = 256 * 1024;

/**
 * Encodes batches as accept log entries, each a length, a CRC-32 and the batch (`encodeBatch`),
 * one after the other in a buffer of its own until they are taken (for one `write`).
 * @example const entries = new EntryEncoder(); entries.add(a); entries.add(b); writeSync(fd, entries.take());
 */
export class EntryEncoder {
  /** Kept at SCRATCH_MAX at most between writes. */
  #buf = Buffer.allocUnsafe(16 * 1024);
  #end = 0;

  /** `ops` as the next entry. */
  add(ops: BatchOp[]): void {
    let most = this.#end + HEAD + 1;
    for (const op of ops) most += 8 + 3 * (op.key.length + (op.value?.length ?? 0));
    if (this.#buf.length < most) {
      const grown = Buffer.allocUnsafe(Math.max(most, 2 * this.#buf.length));
      this.#buf.copy(grown, 0, 0, this.#end);
      this.#buf = grown;
    }
    const start = this.#end;
    const end = encodeBatch(ops, this.#buf, start + HEAD);
    this.#buf.writeUInt32LE(end - start - HEAD, start);
    this.#buf.writeUInt32LE(crc32(this.#buf.subarray(start + HEAD, end)), start + 4);
    this.#end = end;
  }

  /** The entries added since the last take, good until the next `add`. */
  take(): Buffer {
    const entries = this.#buf.subarray(0, this.#end);
    this.#end = 0;
    // A burst's or a large body's entries grew it: let go of it once written.
    if (this.#buf.length > SCRATCH_MAX) this.#buf = Buffer.allocUnsafe(16 * 1024);
    return entries;
  }
}

/**
 * `ops` written into `buf` from `at` (which has room for 3 bytes a UTF-16 unit of their strings
 * and 8 an op, plus one): a BINARY byte, then for each op its key's UTF-8 length (u32) and bytes
 * and its value's (i32, -1 for none). No text is escaped: the values are JSON already.
 * Returns where the batch ends.
 */
function encodeBatch(ops: BatchOp[], buf: Buffer, at: number): number {
  buf[at++] = BINARY;
  for (const { key, value } of ops) {
    const k = buf.write(key, at + 4);
    buf.writeUInt32LE(k, at);
    at += 4 + k;
    if (value === null) {
      buf.writeInt32LE(-1, at);
      at += 4;
      continue;
    }
    const v = buf.write(value, at + 4);
    buf.writeInt32LE(v, at);
    at += 4 + v;
  }
  return at;
}

/** A batch as `encodeBatch` wrote it, or as JSON (an earlier version's); null if neither. */
function decodeBatch(b: Buffer): BatchOp[] | null {
  if (b[0] === JSON_ARRAY) return JSON.parse(b.toString()) as BatchOp[];
  if (b[0] !== BINARY) return null;
  const ops: BatchOp[] = [];
  for (let at = 1; at < b.length; ) {
    const k = b.readUInt32LE(at);
    const key = b.toString("utf8", at + 4, at + 4 + k);
    at += 4 + k;
    const v = b.readInt32LE(at);
    ops.push({ key, value: v < 0 ? null : b.toString("utf8", at + 4, at + 4 + v) });
    at += 4 + Math.max(v, 0);
  }
  return ops;
}

/** The whole entries of a log file, in order; a torn or damaged tail ends it. */
export function readAcceptLog(path: string): BatchOp[][] {
  const buf = readFileSync(path);
  const out: BatchOp[][] = [];
  for (let at = 0; at + HEAD <= buf.length; ) {
    const length = buf.readUInt32LE(at);
    const batch = buf.subarray(at + HEAD, at + HEAD + length);
    if (batch.length < length || crc32(batch) !== buf.readUInt32LE(at + 4)) break;
    const ops = decodeBatch(batch);
    if (!ops) break;
    out.push(ops);
    at += HEAD + length;
  }
  return out;
}
