import * as v from "valibot";
import { compileFilter } from "../events/filter.ts";
import { callProblem, normalizeCall } from "./call.ts";

const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];
/** Names the runtime sets itself; a var must not shadow them. */
const RESERVED_PREFIXES = ["PYTHON", "LD_", "SVC_"];

/** Keys that AutoKitteh knows and Hookline does not run yet: refused with a reason, not "unknown". */
const UNSUPPORTED = new Set(["connections", "schedule", "connection"]);

/** An object schema that reports every unknown key, naming the keys it does accept. */
function strict<const E extends v.ObjectEntries>(entries: E) {
  const known = Object.keys(entries).filter((k) => !UNSUPPORTED.has(k));
  return v.objectWithRest(entries, v.never(`unknown key (expected one of: ${known.join(", ")})`));
}

/** A key that is refused whatever its value. */
const refused = (message: string) => v.optional(v.custom<never>(() => false, message));

const name = v.pipe(
  v.string(),
  v.regex(
    NAME,
    (i) =>
      `"${i.input}" is not a valid name: use letters, digits, "_" and "-" (at most 63), ` +
      `starting with a letter or "_"`,
  ),
);

const eventType = v.pipe(
  v.string(),
  v.check(
    (s) => s === "" || s === "*" || METHODS.includes(s.toLowerCase()),
    (i) => `"${i.input}" is not an HTTP method: use ${METHODS.join(", ")}, or "*" for all`,
  ),
  v.transform((s) => (s === "*" ? "" : s.toLowerCase())),
);

const call = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    const problem = dataset.typed ? callProblem(dataset.value) : null;
    if (problem) addIssue({ message: problem });
  }),
  v.transform(normalizeCall),
);

const filter = v.pipe(
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
const dedupHeader = v.pipe(
  v.string(),
  v.regex(
    /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/,
    (i) => `"${i.input}" is not an HTTP header name (letters, digits and "-", at most 128)`,
  ),
);

const isEmptyMapping = (x: unknown) =>
  x === null || (typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 0);

const TriggerSchema = v.pipe(
  strict({
    name,
    type: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (t) => t === "webhook",
          (i) => `trigger type "${i.input}" is not supported yet (only "webhook" is)`,
        ),
      ),
    ),
    webhook: v.optional(
      v.custom<null | Record<string, never>>(
        isEmptyMapping,
        "webhook takes no settings: write webhook: {}",
      ),
    ),
    schedule: refused('trigger type "schedule" is not supported yet (only "webhook" is)'),
    connection: refused('trigger type "connection" is not supported yet (only "webhook" is)'),
    event_type: v.optional(eventType),
    call: v.optional(call),
    is_sync: v.optional(v.boolean()),
    is_durable: v.optional(v.boolean()),
    filter: v.optional(filter),
    dedup_header: v.optional(dedupHeader),
  }),
  v.partialCheck(
    [["type"], ["webhook"], ["schedule"], ["connection"]],
    (t) => [t.type, t.webhook, t.schedule, t.connection].some((x) => x !== undefined),
    "a trigger needs type: webhook (or webhook: {})",
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"]],
      (t) => t.type === undefined || t.webhook === undefined,
      "give type: webhook or webhook: {}, not both",
    ),
    ["webhook"],
  ),
  v.forward(
    v.partialCheck(
      [["is_sync"], ["call"]],
      (t) => t.is_sync !== true || t.call !== undefined,
      "is_sync: true needs call: a trigger without call starts no session to answer the request",
    ),
    ["is_sync"],
  ),
  v.transform((t) => ({
    name: t.name,
    type: "webhook" as const,
    event_type: t.event_type ?? "",
    call: t.call ?? null,
    is_sync: t.is_sync ?? false,
    // Left open here: the default hangs on the manifest's version.
    is_durable: t.is_durable,
    filter: t.filter ?? "",
    dedup_header: t.dedup_header ?? "",
  })),
);

/** A var's name: the manifest's `vars[].name` and `cli var set`'s NAME alike. */
export const VarName = v.pipe(
  v.string(),
  v.regex(
    VAR_NAME,
    (i) =>
      `"${i.input}" is not a valid variable name: use letters, digits and "_", ` +
      `starting with a letter or "_"`,
  ),
  v.check((n) => n !== "PATH", '"PATH" is reserved for the runtime'),
  v.check(
    (n) => !RESERVED_PREFIXES.some((p) => n.startsWith(p)),
    (i) =>
      `names starting with "${RESERVED_PREFIXES.find((p) => i.input.startsWith(p))}" ` +
      "are reserved for the runtime",
  ),
);

const VarSchema = v.pipe(
  strict({
    name: VarName,
    // YAML reads 8080 or true as numbers and booleans; the env var would silently differ.
    value: v.optional(
      v.string((i) =>
        typeof i.input === "number" || typeof i.input === "boolean"
          ? `expected string (write it in quotes: "${i.input}")`
          : "expected string",
      ),
      "",
    ),
    secret: v.optional(v.boolean(), false),
  }),
  v.transform(({ name, value, secret }) => ({ name, value, secret })),
);

/** Path items for issues raised by raw checks, which see values that may be partly invalid. */
const inList = (input: unknown[], key: number): v.ArrayPathItem => ({
  type: "array",
  origin: "value",
  input,
  key,
  value: input[key],
});
const inMap = (input: Record<string, unknown>, key: string): v.ObjectPathItem => ({
  type: "object",
  origin: "value",
  input,
  key,
  value: input[key],
});

/** Issues for the second and later uses of one name, pointing at the repeated `name`. */
function unique<T>(what: string) {
  return v.rawCheck<T[]>(({ dataset, addIssue }) => {
    // Runs even when items are invalid, so that every issue is reported in one go.
    if (!Array.isArray(dataset.value)) return;
    const list: unknown[] = dataset.value;
    const first = new Map<string, number>();
    for (const [i, item] of list.entries()) {
      const n = (item as { name?: unknown } | null)?.name;
      if (typeof n !== "string") continue;
      const seen = first.get(n);
      if (seen === undefined) {
        first.set(n, i);
        continue;
      }
      addIssue({
        message: `${what} name "${n}" is already used by ${what}s[${seen}]`,
        path: [inList(list, i), inMap(item as Record<string, unknown>, "name")],
      });
    }
  });
}

type Trigger = v.InferOutput<typeof TriggerSchema>;
type Var = v.InferOutput<typeof VarSchema>;

// `triggers:` or `vars:` with nothing after it reads as null; take it as an empty list.
const triggers = v.nullish(v.pipe(v.array(TriggerSchema), unique<Trigger>("trigger")));
const vars = v.nullish(v.pipe(v.array(VarSchema), unique<Var>("var")));
const connections = refused("connections are not supported yet");

const ProjectSchema = strict({ name, triggers, vars, connections });

const TopSchema = strict({
  version: v.picklist(["v1", "v2"], 'expected "v1" or "v2"'),
  project: ProjectSchema,
  triggers,
  vars,
  connections,
});

/** Both layouts at once would leave it unclear which list counts. */
function oneLayout(key: "triggers" | "vars") {
  return v.rawCheck<v.InferOutput<typeof TopSchema>>(({ dataset, addIssue }) => {
    const top = dataset.value as Record<string, unknown> | null;
    const project = top?.project as Record<string, unknown> | null | undefined;
    if (top?.[key] == null || project?.[key] == null) return;
    addIssue({
      message: `${key} given both at the top level and under project: keep one`,
      path: [inMap(top, "project"), inMap(project, key)],
    });
  });
}

/**
 * The manifest as written (either layout) in, the normalized {@link Manifest} out.
 * Parse it with `parseManifest`, which adds lines to the issues.
 */
export const ManifestSchema = v.pipe(
  TopSchema,
  oneLayout("triggers"),
  oneLayout("vars"),
  v.transform(({ version, project, ...top }) => {
    const durable = version === "v1";
    return {
      version,
      project: { name: project.name },
      triggers: (top.triggers ?? project.triggers ?? []).map((t) => ({
        ...t,
        is_durable: t.is_durable ?? durable,
      })),
      vars: top.vars ?? project.vars ?? [],
    };
  }),
);

export type Manifest = v.InferOutput<typeof ManifestSchema>;
export type TriggerSpec = Manifest["triggers"][number];
export type VarSpec = Manifest["vars"][number];
