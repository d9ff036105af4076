import type { Change } from "../manifest/plan.ts";
import type { PlanStep } from "../wire/deploy-result.ts";

/**
 * How the deploy's lines name a project, var, connection or trigger: `demo`, `demo/GREETING`,
 * `demo/slack`, `demo:/hook`.
 * @example subjectOf("trigger", "demo", "hook") // "demo:/hook"
 */
export function subjectOf(kind: Change["kind"], project: string, name: string): string {
  if (kind === "project") return project;
  return kind === "trigger" ? `${project}:/${name}` : `${project}/${name}`;
}

const STATES = {
  create: "not found, will create",
  update: "found, will update",
  keep: "found, no changes needed",
  delete: "found, will delete",
} as const;

/** A var is "set", not "created" (the word the lines have always used). */
const VAR_CREATE = "not found, will set";

/**
 * The planner's changes as the plan steps of a deploy's result.
 * @example planSteps("demo", [{ kind: "project", action: "create" }])[0]?.state
 *   // "not found, will create"
 */
export function planSteps(project: string, changes: Change[]): PlanStep[] {
  return changes.map((c) => {
    const name = c.kind === "project" ? project : c.name;
    const state = c.kind === "var" && c.action === "create" ? VAR_CREATE : STATES[c.action];
    return {
      kind: c.kind,
      name,
      subject: subjectOf(c.kind, project, name),
      action: c.action,
      state,
    };
  });
}
