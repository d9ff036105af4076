/**
 * A value in the SDK's wire form (store values, a session's outcome) as one line of JSON for a
 * person: an exact int as its digits, a tagged float as its number, bytes and pickled objects
 * left tagged (`{"$bytes":"…"}`), so nothing is rounded or guessed.
 * @example wireText({ n: { $int: "18446744073709551616" } }) // '{"n":18446744073709551616}'
 */
export function wireText(w: unknown): string {
  if (w === null || w === undefined) return "null";
  if (typeof w !== "object") return JSON.stringify(w);
  if (Array.isArray(w)) return `[${w.map(wireText).join(",")}]`;
  const o = w as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === "$int" && typeof o.$int === "string") return o.$int;
  if (keys.length === 1 && keys[0] === "$float" && typeof o.$float === "string") {
    return ["nan", "inf", "-inf"].includes(o.$float) ? JSON.stringify(o) : o.$float;
  }
  return `{${keys.map((k) => `${JSON.stringify(k)}:${wireText(o[k])}`).join(",")}}`;
}

/**
 * What `cli store set KEY VALUE` stores: VALUE read as JSON when it is JSON (`5`, `{"a":1}`,
 * `"5"`), else as the text itself (`hello`). Whole numbers past ±(2^53-1) keep their digits.
 * @example parseCliValue("5") // 5
 */
export function parseCliValue(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  return exactInts(parsed, text.trim());
}

function exactInts(v: unknown, text: string): unknown {
  // JSON.parse rounds big ints: a bare big int is sent as the SDK's exact form instead.
  if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v)) {
    return /^-?\d+$/.test(text) ? { $int: text } : v;
  }
  return v;
}
