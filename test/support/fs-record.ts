/** Characters of a rewritten record's padding: large, so that a write takes many syscalls. */
export const PAD = 512 * 1024;

/** The record the rewriter writes in its `n`th write: its padding repeats one letter. */
export function rewrittenRecord(n: number) {
  return { n, pad: String.fromCharCode(97 + (n % 26)).repeat(PAD) };
}

/** Why `value` is not a whole record the rewriter wrote, or null when it is one. */
export function tornReason(value: unknown): string | null {
  if (value === null || typeof value !== "object") {
    return `read ${value === null ? "nothing" : `a ${typeof value}`}`;
  }
  const { n, pad } = value as { n?: unknown; pad?: unknown };
  if (typeof n !== "number" || typeof pad !== "string") return "read a record without n or pad";
  if (pad !== rewrittenRecord(n).pad) return `read record ${n} with ${pad.length} characters mixed`;
  return null;
}
