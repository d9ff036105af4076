import { HooklineError } from "../errors.ts";

/**
 * Values as Python sends them (python-runtime/workflow_sdk/values.py): JSON where a number
 * without a fraction is a Python int and one with a fraction a float, plus one-key tags for what
 * JSON would lose: `{"$int": "…"}` (an int past ±(2^53 - 1)), `{"$float": "1" | "nan" | "inf" |
 * "-inf"}`, `{"$bytes": b64}`, `{"$pickle": b64}`. The store keeps them in this form.
 */
export type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };

const SAFE = 2n ** 53n - 1n;
const INT_TEXT = /^-?\d{1,4300}$/;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_DEPTH = 64;

/** A Python number: an exact int or a float. */
export type Numeric = { kind: "int"; v: bigint } | { kind: "float"; v: number };

function tagOf(w: Wire): [string, Wire] | null {
  if (w === null || typeof w !== "object" || Array.isArray(w)) return null;
  const keys = Object.keys(w);
  if (keys.length !== 1 || !keys[0]?.startsWith("$")) return null;
  return [keys[0], w[keys[0]] as Wire];
}

function floatText(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Number.POSITIVE_INFINITY) return "inf";
  if (x === Number.NEGATIVE_INFINITY) return "-inf";
  return String(x);
}

function parseFloatText(s: string): number | null {
  if (s === "nan") return Number.NaN;
  if (s === "inf") return Number.POSITIVE_INFINITY;
  if (s === "-inf") return Number.NEGATIVE_INFINITY;
  const x = Number(s);
  return s.trim() !== "" && Number.isFinite(x) ? x : null;
}

/** The wire form of an int: a plain number when JSON holds it exactly. */
export function fromInt(v: bigint): Wire {
  return v >= -SAFE && v <= SAFE ? Number(v) : { $int: v.toString() };
}

/** The wire form of a float: a plain number only when it has a fraction (else it would read as an int). */
export function fromFloat(x: number): Wire {
  return Number.isFinite(x) && !Number.isInteger(x) ? x : { $float: floatText(x) };
}

/** The number a wire value holds, or null when it holds none (bools are not numbers here). */
export function numeric(w: Wire): Numeric | null {
  if (typeof w === "number") {
    return Number.isInteger(w) ? { kind: "int", v: BigInt(w) } : { kind: "float", v: w };
  }
  const tag = tagOf(w);
  if (tag?.[0] === "$int" && typeof tag[1] === "string") return { kind: "int", v: BigInt(tag[1]) };
  if (tag?.[0] === "$float" && typeof tag[1] === "string") {
    const x = parseFloatText(tag[1]);
    return x === null ? null : { kind: "float", v: x };
  }
  return null;
}

/** Python's `a + b` on two numbers: int + int stays an exact int, a float anywhere makes a float. */
export function addNumeric(a: Numeric, b: Numeric): Wire {
  if (a.kind === "int" && b.kind === "int") return fromInt(a.v + b.v);
  return fromFloat(Number(a.v) + Number(b.v));
}

/**
 * Checks a wire value from Python and returns its canonical form (tags normalised, an in-range
 * `$int` as a plain number), so equal Python values compare equal here.
 * @example canonical({ $float: "1.0" }) // { $float: "1" }
 */
export function canonical(w: unknown, depth = 0): Wire {
  if (depth > MAX_DEPTH)
    throw new HooklineError("bad_request", `store: value nested deeper than ${MAX_DEPTH}`);
  if (w === null || typeof w === "boolean" || typeof w === "string") return w;
  if (typeof w === "number") {
    if (!Number.isFinite(w))
      throw new HooklineError("bad_request", "store: a number must be finite");
    return w;
  }
  if (Array.isArray(w)) return w.map((x) => canonical(x, depth + 1));
  if (typeof w !== "object")
    throw new HooklineError("bad_request", `store: not a JSON value: ${typeof w}`);
  const obj = w as Record<string, unknown>;
  const tag = tagOf(obj as Wire);
  if (tag) return canonicalTag(tag[0], tag[1]);
  const out: Record<string, Wire> = {};
  for (const [k, x] of Object.entries(obj)) out[k] = canonical(x, depth + 1);
  return out;
}

function canonicalTag(tag: string, raw: Wire): Wire {
  const bad = (what: string) => new HooklineError("bad_request", `store: ${tag} must be ${what}`);
  if (typeof raw !== "string") throw bad("a string");
  switch (tag) {
    case "$int":
      if (!INT_TEXT.test(raw)) throw bad("a decimal integer");
      return fromInt(BigInt(raw));
    case "$float": {
      const x = parseFloatText(raw);
      if (x === null) throw bad("a float, nan, inf or -inf");
      return { $float: floatText(x) };
    }
    case "$bytes":
    case "$pickle":
      if (!B64.test(raw)) throw bad("base64");
      return { [tag]: raw };
    default:
      throw new HooklineError("bad_request", `store: unknown tag ${tag}`);
  }
}

/** JSON with object keys sorted: equal values give equal text (Python dicts ignore key order). */
export function stableJson(w: Wire): string {
  if (w === null || typeof w !== "object") return JSON.stringify(w);
  if (Array.isArray(w)) return `[${w.map(stableJson).join(",")}]`;
  const keys = Object.keys(w).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(w[k] as Wire)}`).join(",")}}`;
}

/** Bytes a value takes in the store (its JSON, UTF-8). */
export function sizeOf(w: Wire): number {
  return Buffer.byteLength(JSON.stringify(w));
}
