import { isEventSource } from "../connections/index.ts";
import type { Manifest } from "../manifest/index.ts";
import type { PlanNote } from "../wire/deploy-result.ts";

/** Distributions the service brings itself: `workflow_sdk`, importable as `autokitteh`. */
const OWN_SDK = new Set(["autokitteh", "workflow-sdk"]);

/** PEP 503: names compare lower-case with runs of `-`, `_`, `.` as one `-`. */
const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/**
 * A `requirements.txt` without the lines that would install AutoKitteh's SDK (or ours) over
 * the service's own, with or without a version, extras or markers; and the lines taken out.
 * @example withoutOwnSdk("requests\nautokitteh>=0.5 ; python_version >= '3.11'\n")
 *   // { text: "requests\n", skipped: ["autokitteh>=0.5 ; python_version >= '3.11'"] }
 */
export function withoutOwnSdk(text: string): { text: string; skipped: string[] } {
  const skipped: string[] = [];
  const kept = text.split("\n").filter((line) => {
    const requirement = line.replace(/(^|\s)#.*$/, "").trim();
    const name = /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(requirement)?.[1];
    if (!name || !OWN_SDK.has(normalize(name))) return true;
    skipped.push(requirement);
    return false;
  });
  return { text: kept.join("\n"), skipped };
}

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
      text: `integration "${integration.get(name) || "(none)"}" delivers no events here yet (github, slack and http do); ${fire}`,
    });
  }
  return notes;
}
