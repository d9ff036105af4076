import { type Document, isMap, isNode, isScalar, isSeq, type LineCounter, type Node } from "yaml";

/** A path into the manifest as valibot reports it: `["triggers", 0, "is_sync"]`. */
export type PathKey = string | number;

/**
 * Where a report about `path` should point, which is rarely ambiguous: the value when there is one,
 * the key when the issue is the key itself (`"key"`) or the value is missing, and the parent
 * mapping when the key is absent altogether.
 * @example lineOf(doc, counter, ["triggers", 0, "is_sync"], "value") // 7
 */
export function lineOf(
  doc: Document,
  counter: LineCounter,
  path: readonly PathKey[],
  at: "value" | "key",
): number {
  const line = (node: Node | null | undefined): number | undefined =>
    node?.range ? counter.linePos(node.range[0]).line : undefined;
  let node: unknown = doc.contents;
  let current = line(doc.contents as Node | null) ?? 1;
  for (const [i, key] of path.entries()) {
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => String(isScalar(p.key) ? p.key.value : p.key) === `${key}`,
      );
      if (!pair) return current;
      const keyLine = line(pair.key as Node) ?? current;
      // `key:` with nothing after it parses as an empty scalar; point at the key.
      const empty = !isNode(pair.value) || (isScalar(pair.value) && pair.value.value === null);
      if ((last && at === "key") || empty) return keyLine;
      node = pair.value;
      current = line(pair.value as Node) ?? keyLine;
    } else if (isSeq(node) && typeof key === "number") {
      const item = node.items[key];
      if (!isNode(item)) return current;
      node = item;
      current = line(item) ?? current;
    } else {
      return current;
    }
  }
  return current;
}
