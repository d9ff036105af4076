import * as v from "valibot";
import {
  call,
  dedupHeader,
  description,
  filter,
  isEmptyMapping,
  isMethod,
  METHODS,
  name,
  RESERVED_PREFIXES,
  strict,
  text,
  VAR_NAME,
} from "./fields.ts";
import {
  ConnectionSchema,
  declaredConnections,
  distinctSourceNames,
  inList,
  inMap,
  KINDS,
  kindOf,
  schedule,
  timezone,
  uniqueConnectionVars,
} from "./kinds.ts";
import { retry } from "./retry.ts";
import { reuseNotDurable } from "./reuse.ts";

const TriggerSchema = v.pipe(
  strict({
    name,
    type: v.optional(
      v.picklist(
        KINDS,
        (i) => `trigger type ${JSON.stringify(i.input)} is not one of ${KINDS.join(", ")}`,
      ),
    ),
    webhook: v.optional(
      v.custom<null | Record<string, never>>(
        isEmptyMapping,
        "webhook takes no settings: write webhook: {}",
      ),
    ),
    schedule: v.optional(schedule),
    timezone: v.optional(timezone),
    connection: v.optional(name),
    event_type: v.optional(v.string()),
    call: v.optional(call),
    is_sync: v.optional(v.boolean()),
    is_durable: v.optional(v.boolean()),
    reuse_process: v.optional(v.boolean()),
    filter: v.optional(filter),
    dedup_header: v.optional(dedupHeader),
    retry: v.optional(retry),
  }),
  v.partialCheck(
    [["type"], ["webhook"], ["schedule"], ["connection"]],
    (t) => kindOf(t).kind !== undefined,
    "a trigger needs type: webhook (or webhook: {}), schedule: <cron> or connection: <name>",
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"], ["schedule"], ["connection"]],
      (t) => {
        const { given, kind } = kindOf(t);
        return given.length <= 1 && (given.length === 0 || given[0] === kind);
      },
      "give one of type: webhook / webhook: {}, schedule: or connection:, not several",
    ),
    ["type"],
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"]],
      (t) => t.type !== "webhook" || t.webhook === undefined,
      "give type: webhook or webhook: {}, not both",
    ),
    ["webhook"],
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["schedule"], ["connection"]],
      (t) =>
        !((t.type === "schedule" && !t.schedule) || (t.type === "connection" && !t.connection)),
      "type: schedule needs schedule: <cron>, and type: connection needs connection: <name>",
    ),
    ["type"],
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"], ["schedule"], ["connection"], ["timezone"]],
      (t) => t.timezone === undefined || kindOf(t).kind === "schedule",
      "timezone is only for schedule triggers",
    ),
    ["timezone"],
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"], ["schedule"], ["connection"], ["event_type"]],
      (t) => {
        const kind = kindOf(t).kind;
        if (kind === "connection" || t.event_type === undefined) return true;
        return kind === "webhook" && isMethod(t.event_type);
      },
      (i) => {
        const t = i.input as { event_type?: string; schedule?: unknown };
        return t.schedule !== undefined
          ? "a schedule trigger takes no event_type"
          : `"${t.event_type}" is not an HTTP method: use ${METHODS.join(", ")}, or "*" for all`;
      },
    ),
    ["event_type"],
  ),
  v.forward(
    v.partialCheck(
      [["type"], ["webhook"], ["schedule"], ["connection"], ["is_sync"]],
      (t) => t.is_sync !== true || kindOf(t).kind === "webhook",
      "is_sync is only for webhook triggers: nothing waits for a schedule's or connection's answer",
    ),
    ["is_sync"],
  ),
  v.forward(
    v.partialCheck(
      [["is_sync"], ["call"]],
      (t) => t.is_sync !== true || t.call !== undefined,
      "is_sync: true needs call: a trigger without call starts no session to answer the request",
    ),
    ["is_sync"],
  ),
  v.transform((t) => {
    const type = kindOf(t).kind!;
    const eventType = t.event_type ?? "";
    return {
      name: t.name,
      type,
      event_type:
        type === "connection" ? eventType : eventType === "*" ? "" : eventType.toLowerCase(),
      call: t.call ?? null,
      is_sync: t.is_sync ?? false,
      // Left open here: the default hangs on the manifest's version.
      is_durable: t.is_durable,
      reuse_process: t.reuse_process ?? false,
      filter: t.filter ?? "",
      schedule: type === "schedule" ? t.schedule! : null,
      timezone: type === "schedule" ? (t.timezone ?? "UTC") : null,
      connection: type === "connection" ? t.connection! : null,
      dedup_header: t.dedup_header ?? "",
      retry: t.retry ?? null,
    };
  }),
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
    // AutoKitteh's manifest has it: what the var is for, shown next to it (cli var list, UI).
    description,
    // parseManifest hands a number or boolean over as the text written (8080, true), as
    // AutoKitteh reads it; an empty `value:` is "".
    value: text,
    secret: v.optional(v.boolean(), false),
  }),
  v.transform(({ name, value, secret, description }) => ({ name, value, secret, description })),
);

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
const Connection = ConnectionSchema(name);
const connections = v.nullish(
  v.pipe(v.array(Connection), unique<v.InferOutput<typeof Connection>>("connection")),
);

// `display_name`: AutoKitteh's name for people (the web UI's heading), beside the `name` ids use.
const ProjectSchema = strict({ name, display_name: description, triggers, vars, connections });

const TopSchema = strict({
  version: v.picklist(["v1", "v2"], 'expected "v1" or "v2"'),
  project: ProjectSchema,
  triggers,
  vars,
  connections,
});

/** Both layouts at once would leave it unclear which list counts. */
function oneLayout(key: "triggers" | "vars" | "connections") {
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
  oneLayout("connections"),
  declaredConnections<v.InferOutput<typeof TopSchema>>(),
  uniqueConnectionVars<v.InferOutput<typeof TopSchema>>(),
  distinctSourceNames<v.InferOutput<typeof TopSchema>>(),
  reuseNotDurable<v.InferOutput<typeof TopSchema>>(),
  v.transform(({ version, project, ...top }) => {
    const durable = version === "v1";
    const connections = top.connections ?? project.connections ?? [];
    // A connection's vars are the project's env vars `<connection>__<var>`, deployed as vars are.
    const connectionVars = connections.flatMap((c) =>
      c.vars.map((x) => ({ ...x, name: `${c.name}__${x.name}` })),
    );
    return {
      version,
      project: { name: project.name, display_name: project.display_name },
      triggers: (top.triggers ?? project.triggers ?? []).map((t) => ({
        ...t,
        is_durable: t.is_durable ?? durable,
      })),
      vars: [...(top.vars ?? project.vars ?? []), ...connectionVars],
      connections,
    };
  }),
);

export type Manifest = v.InferOutput<typeof ManifestSchema>;
export type TriggerSpec = Manifest["triggers"][number];
export type VarSpec = Manifest["vars"][number];
export type ConnectionSpec = Manifest["connections"][number];
