import { randomBytes } from "node:crypto";

/** Crockford-style lowercase base32 alphabet: no i, l, o, u, so ids read unambiguously. */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "prj" | "trg" | "bld" | "dep" | "env" | "ses" | "evt" | "sub" | "con";

let lastTime = 0;
let lastRandom: Uint8Array = new Uint8Array(10);

function encode(bytes: Uint8Array, chars: number): string {
  // Big-endian base32 of the bytes, right-aligned to `chars` characters.
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/**
 * A ULID-shaped body: 10 characters of millisecond time then 16 of randomness, 26 in all, so ids
 * sort by creation time. Ids made in the same millisecond increase monotonically.
 */
export function ulidBody(now = Date.now()): string {
  let random: Uint8Array;
  if (now <= lastTime) {
    random = lastRandom.slice();
    for (let i = random.length - 1; i >= 0; i--) {
      random[i] = ((random[i] ?? 0) + 1) & 0xff;
      if (random[i] !== 0) break;
    }
    now = lastTime;
  } else {
    random = randomBytes(10);
  }
  lastTime = now;
  lastRandom = random;
  const time = new Uint8Array(8);
  new DataView(time.buffer).setBigUint64(0, BigInt(now));
  return encode(time, 10) + encode(random, 16);
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
  return encode(randomBytes(17), 26);
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
