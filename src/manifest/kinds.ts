import * as v from "valibot";
import { checkTimezone, parseSchedule } from "../schedules/spec.ts";
import { description, strict, text } from "./fields.ts";

// The kinds of trigger besides webhooks (schedules, connections) and the checks they need, apart
// from schema.ts so that each file stays about one thing.

/** A cron text or descriptor, checked here so a typo fails the deploy, not the clock. */
export const schedule = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      parseSchedule(dataset.value);
    } catch (e) {
      addIssue({ message: (e as Error).message });
    }
  }),
);

export const timezone = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      checkTimezone(dataset.value);
    } catch (e) {
      addIssue({ message: (e as Error).message });
    }
  }),
);

export const KINDS = ["webhook", "schedule", "connection"] as const;
export type Kind = (typeof KINDS)[number];

/**
 * What a trigger is, from `type:` or from the key that names its source, and which source keys
 * it gives (more than one is an error the schema reports).
 * @example kindOf({ schedule: "@daily" }) // { given: ["schedule"], kind: "schedule" }
 */
export function kindOf(t: {
  type?: string;
  webhook?: unknown;
  schedule?: unknown;
  connection?: unknown;
}) {
  const given = [
    t.webhook !== undefined && "webhook",
    t.schedule !== undefined && "schedule",
    t.connection !== undefined && "connection",
  ].filter((k): k is Kind => k !== false);
  return { given, kind: (t.type as Kind | undefined) ?? given[0] };
}

/** Path items for issues raised by raw checks, which see values that may be partly invalid. */
export const inList = (input: unknown[], key: number): v.ArrayPathItem => ({
  type: "array",
  origin: "value",
  input,
  key,
  value: input[key],
});
export const inMap = (input: Record<string, unknown>, key: string): v.ObjectPathItem => ({
  type: "object",
  origin: "value",
  input,
  key,
  value: input[key],
});

/** A connection's own var: `name` is short (`pat`); the env var is `<connection>__<name>`. */
const ConnectionVar = v.pipe(
  strict({
    name: v.pipe(
      v.string(),
      v.regex(
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        (i) => `"${i.input}" is not a valid variable name: use letters, digits and "_"`,
      ),
    ),
    description,
    // A number or boolean arrives as its text (parseManifest), as in `vars:`.
    value: text,
    secret: v.optional(v.boolean(), false),
  }),
  v.transform(({ name, value, secret, description }) => ({ name, value, secret, description })),
);

/**
 * A connection to a third-party service. Its name becomes the prefix of its env vars
 * (`<name>__<var>`), so it takes no "-". Other keys AutoKitteh writes are accepted and left.
 * github, slack and http connections receive events (src/connections/); others deploy their vars
 * with their triggers inactive.
 * @example v.parse(ConnectionSchema(v.string()), { name: "slack", integration: "slack" })
 *   // { name: "slack", integration: "slack", vars: [] }
 */
export const ConnectionSchema = (name: v.GenericSchema<unknown, string>) =>
  v.pipe(
    v.looseObject({
      name: v.pipe(
        name,
        v.check(
          (n) => !n.includes("-"),
          (i) => `"${i.input}": a connection's name prefixes env vars (<name>__<var>): no "-"`,
        ),
      ),
      integration: v.optional(v.string(), ""),
      vars: v.nullish(v.array(ConnectionVar), []),
    }),
    v.transform((c) => ({
      name: c.name,
      integration: c.integration,
      vars: c.vars ?? [],
    })),
  );
/**
 * A trigger's `connection:` must name a connection the manifest declares (either layout).
 * @example v.pipe(TopSchema, declaredConnections<v.InferOutput<typeof TopSchema>>())
 */
export function declaredConnections<T>() {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const top = dataset.value as Record<string, unknown> | null;
    const project = top?.project as Record<string, unknown> | null | undefined;
    // Given twice, which list counts is unclear: oneLayout says so, and this check waits.
    if (top?.connections != null && project?.connections != null) return;
    const listOf = (key: string) => {
      const at = top?.[key] != null ? top : project;
      const list = at?.[key];
      return Array.isArray(list) ? { at: at!, list: list as unknown[] } : null;
    };
    const declared = (listOf("connections")?.list ?? []).map(
      (c) => (c as { name?: unknown } | null)?.name,
    );
    const triggers = listOf("triggers");
    for (const [i, t] of (triggers?.list ?? []).entries()) {
      const name = (t as { connection?: unknown } | null)?.connection;
      if (typeof name !== "string" || declared.includes(name)) continue;
      const at: [v.IssuePathItem, ...v.IssuePathItem[]] = [
        inMap(triggers!.at, "triggers"),
        inList(triggers!.list, i),
        inMap(t as Record<string, unknown>, "connection"),
      ];
      const message = `connection "${name}" is not declared under connections`;
      addIssue({ message, path: triggers!.at === top ? at : [inMap(top!, "project"), ...at] });
    }
  });
}

/**
 * A connection's var becomes the env var `<connection>__<var>`: naming it also under `vars:`
 * (or twice under the connection) would leave unclear which value counts.
 * @example v.pipe(TopSchema, uniqueConnectionVars<v.InferOutput<typeof TopSchema>>())
 */
export function uniqueConnectionVars<T>() {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const top = dataset.value as Record<string, unknown> | null;
    const project = top?.project as Record<string, unknown> | null | undefined;
    const at = (key: string) => (top?.[key] != null ? top : project);
    const seen = new Set<string>();
    for (const x of (at("vars")?.vars as unknown[] | undefined) ?? []) {
      const n = (x as { name?: unknown } | null)?.name;
      if (typeof n === "string") seen.add(n);
    }
    const holder = at("connections");
    const list = holder?.connections;
    if (!Array.isArray(list)) return;
    for (const [i, c] of list.entries()) {
      const conn = c as Record<string, unknown> | null;
      if (!conn || typeof conn.name !== "string" || !Array.isArray(conn.vars)) continue;
      for (const [j, x] of conn.vars.entries()) {
        const n = (x as { name?: unknown } | null)?.name;
        if (typeof n !== "string") continue;
        const full = `${conn.name}__${n}`;
        if (!seen.has(full)) {
          seen.add(full);
          continue;
        }
        const path: [v.IssuePathItem, ...v.IssuePathItem[]] = [
          inMap(holder!, "connections"),
          inList(list, i),
          inMap(conn, "vars"),
          inList(conn.vars, j),
          inMap(x as Record<string, unknown>, "name"),
        ];
        addIssue({
          message: `var "${full}" is set twice (under vars: or this connection)`,
          path: holder === top ? path : [inMap(top!, "project"), ...path],
        });
      }
    }
  });
}

/**
 * `subscribe(name)` takes a trigger's or a connection's name, so the two must differ.
 * @example v.pipe(TopSchema, distinctSourceNames<v.InferOutput<typeof TopSchema>>())
 */
export function distinctSourceNames<T>() {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const top = dataset.value as Record<string, unknown> | null;
    const project = top?.project as Record<string, unknown> | null | undefined;
    const holder = (key: string) => (top?.[key] != null ? top : project);
    const conns = holder("connections")?.connections;
    const names = new Set(
      (Array.isArray(conns) ? conns : []).map((c) => (c as { name?: unknown } | null)?.name),
    );
    const at = holder("triggers");
    const list = at?.triggers;
    if (!Array.isArray(list)) return;
    for (const [i, t] of list.entries()) {
      const n = (t as { name?: unknown } | null)?.name;
      if (typeof n !== "string" || !names.has(n)) continue;
      const path: [v.IssuePathItem, ...v.IssuePathItem[]] = [
        inMap(at!, "triggers"),
        inList(list, i),
        inMap(t as Record<string, unknown>, "name"),
      ];
      addIssue({
        message: `"${n}" names a connection too: subscribe("${n}") could not tell them apart`,
        path: at === top ? path : [inMap(top!, "project"), ...path],
      });
    }
  });
}
