import * as v from "valibot";
import { type Document, isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { ManifestError, type ManifestIssue } from "./error.ts";
import { lineOf, type PathKey } from "./lines.ts";
import { type Manifest, ManifestSchema } from "./schema.ts";

/** Longest manifest read, in characters: YAML parsing costs memory in proportion. */
export const MAX_MANIFEST_CHARS = 256 * 1024;

/** Messages for the plain type checks; the schema words everything else itself. */
function describe(issue: v.BaseIssue<unknown>): string {
  if (issue.received === "undefined") return "required";
  const expected = issue.expected ?? "";
  const noun = { Object: "mapping", Array: "list" }[expected] ?? expected;
  return noun ? `expected ${noun}` : issue.message;
}

function formatPath(path: readonly PathKey[]): string {
  return path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? k : `.${k}`)).join("");
}

/**
 * A var's `value: 120` or `value: true` becomes the text as written ("120", "true"), as
 * AutoKitteh (Go, a string field) reads it: YAML's number would lose `1.50` or `0x1F`.
 */
function varValuesAsText(doc: Document, text: string): void {
  const lists = [doc.getIn(["vars"], true), doc.getIn(["project", "vars"], true)];
  // And each connection's `vars:`.
  for (const at of [["connections"], ["project", "connections"]]) {
    const conns = doc.getIn(at, true);
    if (!isSeq(conns)) continue;
    for (const c of conns.items) if (isMap(c)) lists.push(c.get("vars", true));
  }
  for (const list of lists) {
    if (!isSeq(list)) continue;
    for (const item of list.items) {
      const value = isMap(item) ? item.get("value", true) : undefined;
      if (!isScalar(value) || !value.range) continue;
      if (typeof value.value !== "number" && typeof value.value !== "boolean") continue;
      value.value = text.slice(value.range[0], value.range[1]);
    }
  }
}

/**
 * Reads a manifest, either layout, and returns it normalized (defaults filled in, `event_type`
 * lower-case, `call` paths tidied). Every problem is reported at once, sorted by line.
 * @throws ManifestError listing each problem as `file:line: path: message`
 * @example
 * const m = parseManifest("version: v2\nproject:\n  name: demo\ntriggers:\n  - name: hook\n    type: webhook\n");
 * m.triggers[0]; // { name: "hook", type: "webhook", event_type: "", call: null, is_sync: false, ... }
 */
export function parseManifest(text: string, file = "manifest.yaml"): Manifest {
  if (text.length > MAX_MANIFEST_CHARS) {
    throw new ManifestError(file, [
      {
        line: 1,
        path: "",
        message: `the manifest is larger than ${MAX_MANIFEST_CHARS / 1024} KiB; a manifest lists triggers and vars, not data`,
      },
    ]);
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: true });
  const fail = (issues: ManifestIssue[]): never => {
    throw new ManifestError(file, issues);
  };
  if (doc.errors.length > 0) {
    fail(
      doc.errors.map((e) => ({
        line: e.linePos?.[0].line ?? counter.linePos(e.pos[0]).line,
        path: "",
        // The pretty message repeats the position and quotes the source; keep the reason.
        message: `invalid YAML: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`,
      })),
    );
  }
  if (doc.contents === null) fail([{ line: 1, path: "", message: "the manifest is empty" }]);
  if (!isMap(doc.contents)) {
    fail([
      { line: 1, path: "", message: "expected a mapping with version, project, triggers, vars" },
    ]);
  }
  varValuesAsText(doc, text);
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    fail([{ line: 1, path: "", message: `invalid YAML: ${(e as Error).message}` }]);
  }
  const result = v.safeParse(ManifestSchema, raw, { message: describe });
  if (result.success) return result.output;
  const issues = result.issues.map((issue): ManifestIssue => {
    const path = (issue.path ?? []).map((p) => p.key as PathKey);
    // Unknown and refused keys are about the key, not what follows it.
    const at = issue.type === "never" || issue.type === "custom" ? "key" : "value";
    return { line: lineOf(doc, counter, path, at), path: formatPath(path), message: issue.message };
  });
  return fail(issues.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity)));
}
