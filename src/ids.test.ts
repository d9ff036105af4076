import { beforeEach, describe, expect, it, vi } from "vitest";

// The CSPRNG's bytes, chosen by a test when `pattern` is set (repeated over the buffer): the
// carry between the two halves of an id's randomness and the wrap past the largest value only
// show with chosen bytes.
const rng = vi.hoisted(() => ({ pattern: null as number[] | null }));
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  const fill = <T extends NodeJS.ArrayBufferView>(buf: T): T => {
    const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = rng.pattern![i % rng.pattern!.length]!;
    return buf;
  };
  return {
    ...real,
    randomFillSync: <T extends NodeJS.ArrayBufferView>(buf: T): T =>
      rng.pattern ? fill(buf) : real.randomFillSync(buf),
    randomBytes: (n: number) => (rng.pattern ? fill(Buffer.alloc(n)) : real.randomBytes(n)),
  };
});

// The unit project shares one module registry across files (vitest.config.ts, isolate: false):
// an ids.ts another file loaded first would hold the real CSPRNG, so it is loaded afresh here.
vi.resetModules();
const { ID_PATTERN, WEBHOOK_ID_PATTERN, idTime, newId, ulidBody, webhookId } = await import(
  "./ids.ts"
);

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** The encoding as it was first written (BigInt over the bytes): what ids must stay equal to. */
function reference(bytes: Uint8Array, chars: number): string {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < chars; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

function timeBytes(ms: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(ms));
  return b;
}

/** An id body's 80 random bits as a number. */
const randomPart = (body: string) =>
  [...body.slice(10)].reduce((v, ch) => v * 32n + BigInt(ALPHABET.indexOf(ch)), 0n);

/** 80 bits from 10 bytes, big-endian. */
const value = (bytes: number[]) => bytes.reduce((v, b) => (v << 8n) | BigInt(b), 0n);

let clock = Date.now() + 1_000_000;

/**
 * Chooses the CSPRNG's bytes and returns the first id drawn from them: ids drawn before may
 * have left bytes in the pool, so ids are taken (each a millisecond later) until one shows them.
 */
function drawWith(pattern: number[]): string {
  rng.pattern = pattern;
  for (let i = 0; i <= 256; i++) {
    const body = ulidBody(++clock);
    if (randomPart(body) === value(pattern)) return body;
  }
  throw new Error("the pool never drew the chosen bytes");
}

describe("ids", () => {
  beforeEach(() => {
    rng.pattern = null;
  });

  it("encodes the time as the BigInt encoding did, and idTime reads it back", () => {
    for (const ms of [1, 31, 32, 1023, 2 ** 32 + 7, 2 ** 47 + 12345, 2 ** 48 - 1]) {
      // Each call at a later millisecond than the one before, else the time is the last one's.
      const body = ulidBody(ms);
      const at = Number(idTime(`evt_${body}`));
      expect(at).toBeGreaterThanOrEqual(ms);
      expect(body.slice(0, 10)).toBe(reference(timeBytes(at), 10));
    }
    clock = Math.max(clock, 2 ** 48);
  });

  it("encodes the random part and webhook ids as the BigInt encoding did", () => {
    const pattern = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xa5, 0x5a];
    const body = drawWith(pattern);
    expect(body.slice(10)).toBe(reference(Uint8Array.from(pattern), 16));
    const seventeen = Array.from({ length: 17 }, (_, i) => pattern[i % 10]!);
    expect(webhookId()).toBe(reference(Uint8Array.from(seventeen), 26));
  });

  it("counts up within a millisecond, carrying into the high half and wrapping past the largest", () => {
    // The low half all ones: the next id carries into the high half.
    const carry = drawWith([0x12, 0x34, 0x56, 0x78, 0x9a, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const at = Number(idTime(`evt_${carry}`));
    const next = ulidBody(at);
    expect(next.slice(0, 10)).toBe(carry.slice(0, 10));
    expect(randomPart(next)).toBe(randomPart(carry) + 1n);
    expect(next > carry).toBe(true);
    // All ones: the next id wraps to zero (as the byte-wise increment did), its time kept.
    const top = drawWith(Array(10).fill(0xff));
    const wrapped = ulidBody(Number(idTime(`evt_${top}`)));
    expect(wrapped.slice(0, 10)).toBe(top.slice(0, 10));
    expect(randomPart(wrapped)).toBe(0n);
  });

  it("makes ids of the documented shape, increasing and distinct when made in a row", () => {
    const ids = Array.from({ length: 3000 }, () => newId("evt"));
    for (const id of ids) expect(id).toMatch(ID_PATTERN);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(webhookId()).toMatch(WEBHOOK_ID_PATTERN);
  });
});
