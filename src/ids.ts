import { randomBytes, randomFillSync } from "node:crypto";

/** Crockford-style lowercase base32 alphabet: no i, l, o, u, so ids read unambiguously. */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "prj" | "trg" | "bld" | "dep" | "env" | "ses" | "evt" | "sub" | "con";

/** 2^40: an id's 80 random bits are kept as two 40-bit halves, exact in a double. */
const HALF = 2 ** 40;

/**
 * Random bytes drawn from the CSPRNG a pool at a time: one `randomFillSync` per 256 ids
 * instead of a `randomBytes` call (and its buffer) per id. Bounded: 2,560 bytes.
 */
const pool = Buffer.alloc(10 * 256);
let poolAt = pool.length;

let lastTime = 0;
let lastHigh = 0;
let lastLow = 0;

/** Every pair of base32 characters, indexed by the 10 bits they carry. */
const PAIRS = Array.from(ALPHABET, (a) => Array.from(ALPHABET, (b) => a + b)).flat();

/**
 * `n` (an integer below 2^53) in base32, its low `5 * chars` bits right-aligned; `chars` even.
 * Two characters a step, and no `%`, which on numbers past 2^31 is a floating-point remainder.
 */
function encodeNumber(n: number, chars: number): string {
  let out = "";
  for (let i = 0; i < chars; i += 2) {
    const rest = Math.floor(n / 1024);
    out = PAIRS[n - rest * 1024]! + out;
    n = rest;
  }
  return out;
}

/**
 * A ULID-shaped body: 10 characters of millisecond time then 16 of randomness, 26 in all, so ids
 * sort by creation time. Ids made in the same millisecond increase monotonically (the 80 random
 * bits plus one, wrapping to zero past the largest). Plain numbers, no BigInt: an id is made on
 * every webhook request.
 */
export function ulidBody(now = Date.now()): string {
  if (now <= lastTime) {
    now = lastTime;
    lastLow = (lastLow + 1) % HALF;
    if (lastLow === 0) lastHigh = (lastHigh + 1) % HALF;
  } else {
    if (poolAt === pool.length) {
      randomFillSync(pool);
      poolAt = 0;
    }
    lastHigh = pool.readUIntBE(poolAt, 5);
    lastLow = pool.readUIntBE(poolAt + 5, 5);
    poolAt += 10;
  }
  lastTime = now;
  return encodeNumber(now, 10) + encodeNumber(lastHigh, 8) + encodeNumber(lastLow, 8);
}

/**
 * A new identifier such as `prj_01jd…` (prefix, underscore, 26 base32 characters).
 * @example newId("ses") // "ses_01jdz8q6c4m2v7p3x9a0b1c2d3"
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulidBody()}`;
}

/**
 * A webhook id: 26 base32 characters carrying 130 random bits. The URL is a capability, so
 * nothing in it derives from names, counters or time.
 * @example webhookId() // "k3v9…" (26 characters)
 */
export function webhookId(): string {
  // 17 random bytes, their low 130 bits: 10 of the first two bytes, then three 40-bit runs.
  const b = randomBytes(17);
  return (
    encodeNumber(b.readUInt16BE(0), 2) +
    encodeNumber(b.readUIntBE(2, 5), 8) +
    encodeNumber(b.readUIntBE(7, 5), 8) +
    encodeNumber(b.readUIntBE(12, 5), 8)
  );
}

export const ID_PATTERN = /^(prj|trg|bld|dep|env|ses|evt|sub)_[0-9a-hjkmnp-tv-z]{26}$/;
export const WEBHOOK_ID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * The creation time (epoch ms) carried by an id made by `newId`, or null for another shape.
 * @example idTime(newId("sub")) // ≈ Date.now()
 */
export function idTime(id: string): number | null {
  const body = id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11);
  if (body.length !== 10) return null;
  let ms = 0;
  for (const ch of body) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) return null;
    ms = ms * 32 + v;
  }
  return ms;
}

/**
 * The smallest id of a prefix made at `ms` (epoch ms): ids made before it sort below it, so it
 * is a cursor for "made before `ms`".
 * @example idAt("ses", Date.parse("2026-12-01T00:00:00Z")) // "ses_01…0000000000000000"
 */
export function idAt(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeNumber(Math.max(0, Math.floor(ms)), 10)}${"0".repeat(16)}`;
}
