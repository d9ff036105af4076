import * as v from "valibot";
import { checkTimezone, parseSchedule } from "../schedules/spec.ts";

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

/**
 * Connections to third-party services: accepted so the rest of the project deploys, and
 * reported by the deploy as not supported yet (their triggers are stored inactive).
 * @example v.parse(ConnectionSchema(v.string()), { name: "slack", integration: "slack" })
 *   // { name: "slack", integration: "slack" }
 */
export const ConnectionSchema = (name: v.GenericSchema<unknown, string>) =>
  v.pipe(
    v.looseObject({ name }),
    v.transform((c) => ({
      name: c.name,
      integration: typeof c.integration === "string" ? c.integration : "",
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
