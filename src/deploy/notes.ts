import { eventSourcesText, isEventSource } from "../connections/index.ts";
import type { Manifest } from "../manifest/index.ts";
import type { PlanNote } from "../wire/deploy-result.ts";

/**
 * The plan notes about what a deploy leaves out: each skipped requirement, and each connection
 * of an integration that delivers no events here, with the triggers that will not fire because
 * of it (its vars are set all the same).
 * @example planNotes("demo", manifest, ["autokitteh==0.9"])[0]
 *   // { kind: "requirement", subject: "autokitteh==0.9", text: "skipped: …" }
 */
export function planNotes(project: string, manifest: Manifest, skipped: string[]): PlanNote[] {
  const notes: PlanNote[] = skipped.map((line) => ({
    kind: "requirement",
    subject: line,
    text: "skipped: the service provides workflow_sdk, importable as autokitteh",
  }));
  const silent = manifest.connections.filter((c) => !isEventSource(c.integration));
  const connections = new Map<string, string[]>(silent.map((c) => [c.name, []]));
  const integration = new Map(manifest.connections.map((c) => [c.name, c.integration]));
  for (const t of manifest.triggers) {
    if (t.connection === null || !connections.has(t.connection)) continue;
    connections.set(t.connection, [...(connections.get(t.connection) ?? []), t.name]);
  }
  for (const [name, triggers] of connections) {
    const fire = triggers.length
      ? `its triggers will not fire (${triggers.map((t) => `"${t}"`).join(", ")}, stored inactive)`
      : "it has no triggers";
    notes.push({
      kind: "connection",
      subject: `${project}/${name}`,
      text: `integration "${integration.get(name) || "(none)"}" delivers no events here yet (${eventSourcesText()} do); ${fire}`,
    });
  }
  return notes;
}
