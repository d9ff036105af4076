import * as v from "valibot";
import { compileFilter } from "../events/filter.ts";
import { callProblem, normalizeCall } from "./call.ts";

// The manifest's field-level schemas: names, calls, filters, header names. schema.ts puts them
// together into triggers, vars, connections and the two layouts.

export const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;
export const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];
/** Names the runtime sets itself; a var must not shadow them. */
export const RESERVED_PREFIXES = ["PYTHON", "LD_", "SVC_"];

/** An object schema that reports every unknown key, naming the keys it does accept. */
export function strict<const E extends v.ObjectEntries>(entries: E) {
  const known = Object.keys(entries);
  return v.objectWithRest(entries, v.never(`unknown key (expected one of: ${known.join(", ")})`));
}

export const name = v.pipe(
  v.string(),
  v.regex(
    NAME,
    (i) =>
      `"${i.input}" is not a valid name: use letters, digits, "_" and "-" (at most 63), ` +
      `starting with a letter or "_"`,
  ),
);

/**
 * A trigger's name where it is looked up rather than declared (the session list's `trigger`
 * filter): the same pattern as `name`, with messages that do not echo a long input back.
 */
export const TriggerName = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(63, "must be at most 63 characters"),
  v.regex(
    NAME,
    'must be a trigger name: letters, digits, "_" and "-", starting with a letter or "_"',
  ),
);

export const isMethod = (s: string) => s === "" || s === "*" || METHODS.includes(s.toLowerCase());

export const call = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    const problem = dataset.typed ? callProblem(dataset.value) : null;
    if (problem) addIssue({ message: problem });
  }),
  v.transform(normalizeCall),
);

export const filter = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      compileFilter(dataset.value);
    } catch (e) {
      addIssue({ message: e instanceof Error ? e.message : String(e) });
    }
  }),
);

/** An HTTP header name (RFC 9110 token) whose value names a delivery. */
export const dedupHeader = v.pipe(
  v.string(),
  v.regex(
    /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/,
    (i) => `"${i.input}" is not an HTTP header name (letters, digits and "-", at most 128)`,
  ),
);

/** A var's `value`: text; an empty `value:` (YAML null) is "". */
export const text = v.pipe(
  v.nullish(v.string(), ""),
  v.transform((x) => x ?? ""),
);

/** Words for people (a var's `description`, the project's `display_name`): "" when absent. */
export const description = v.pipe(
  v.nullish(v.pipe(v.string(), v.maxLength(4096, "at most 4,096 characters")), ""),
  v.transform((x) => x ?? ""),
);

export const isEmptyMapping = (x: unknown) =>
  x === null || (typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 0);
