import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import type { Entry } from "./plan.ts";
import { defaultSecret } from "./secrets.ts";
import type { Service } from "./service.ts";
import type { StandIn } from "./stand-in.ts";

/** The stand-in preset whose `env()` points an integration's client helper at it, if any. */
const PRESET_OF: Record<string, string> = {
  github: "github",
  slack: "slack",
  telegram: "telegram",
  discord: "discord",
  jira: "jira",
  confluence: "confluence",
  twilio: "twilio",
  googlecalendar: "calendar",
  googledrive: "drive",
  googlesheets: "sheets",
  gmail: "gmail",
  google: "gmail",
  googleforms: "gmail",
  googlegemini: "gmail",
  youtube: "gmail",
};

/** `"$API"` → the stand-in's URL, in a var's value (objects and lists as JSON). */
export function fill(value: unknown, url: string): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.replaceAll("$API", url);
}

export interface Deployed {
  name: string;
  dir: string;
  /** Problems met while deploying and setting vars; empty when all went well. */
  problems: string[];
  /** Connections and what each still needs (`connection list`). */
  connections: string[];
}

/** The project's copy in a temp folder (unchanged), and its manifest's project name. */
function copyProject(kittehub: string, e: Entry): { dir: string; name: string } {
  const dir = mkdtempSync(join(tmpdir(), "kittehub-project-"));
  cpSync(join(kittehub, e.project), dir, { recursive: true });
  for (const file of e.set_aside ?? []) rmSync(join(dir, file), { force: true });
  const manifest = parse(readFileSync(join(dir, "autokitteh.yaml"), "utf8")) as {
    project?: { name?: string };
  };
  return { dir, name: manifest.project?.name ?? "" };
}

async function setConnectionVars(
  svc: Service,
  api: StandIn,
  e: Entry,
  name: string,
  problems: string[],
): Promise<void> {
  for (const c of await svc.connections(name)) {
    const preset = PRESET_OF[c.integration];
    const env = await api.env(c.name, preset);
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) vars[k.slice(c.name.length + 2)] = v;
    for (const [k, v] of Object.entries(e.vars?.[c.name] ?? {})) vars[k] = fill(v, api.url);
    const secret = defaultSecret(e, c.name, c.integration);
    const sets = Object.entries(vars).map(([k, v]) => [k, v, ""]);
    if (secret) sets.push(secret);
    for (const [k, v, flag] of sets) {
      const argv = ["var", "set", "--connection", `${name}/${c.name}`, ...(flag ? [flag] : [])];
      const r = await svc.cli(...argv, k!, v!);
      if (r.code !== 0) problems.push(`var ${c.name}__${k}: ${r.err.join(" ")}`);
    }
  }
  for (const conn of Object.keys(e.vars ?? {})) {
    if (conn === "project") continue;
    if (!(await svc.connections(name)).some((c) => c.name === conn)) {
      problems.push(`vars.${conn}: the project has no such connection`);
    }
  }
}

/**
 * Deploys the entry's project with the real CLI from an unchanged copy, then sets its vars:
 * each connection's from the stand-in (`api.env` for its integration) and the entry's, then the
 * entry's project vars. Problems are returned, not thrown: a failed deploy blocks the entry.
 */
export async function deployEntry(
  svc: Service,
  api: StandIn,
  kittehub: string,
  e: Entry,
): Promise<Deployed> {
  const { dir, name } = copyProject(kittehub, e);
  const problems: string[] = [];
  if (e.set_aside?.length) problems.push(`set aside before deploying: ${e.set_aside.join(", ")}`);
  const r = await svc.cli("deploy", "--manifest", join(dir, "autokitteh.yaml"));
  if (r.code !== 0) {
    problems.push(`deploy failed: ${deployError(r.err)}`);
    return { name, dir, problems, connections: [] };
  }
  await setConnectionVars(svc, api, e, name, problems);
  for (const [k, v] of Object.entries(e.vars?.project ?? {})) {
    const set = await svc.cli("var", "set", "--env", name, k, fill(v, api.url));
    if (set.code !== 0) problems.push(`project var ${k}: ${set.err.join(" ")}`);
  }
  const connections = (await svc.connections(name)).map((c) =>
    c.status.state === "ready"
      ? `${c.name}(${c.integration}) ready`
      : `${c.name}(${c.integration}) ${c.status.state}${c.status.needs.length ? `: needs ${c.status.needs.join(", ")}` : ""}`,
  );
  return { name, dir, problems, connections };
}

/** A failed deploy's error in a line or two: the CLI's `error:` line and pip's `ERROR:` lines. */
export function deployError(err: string[]): string {
  const lines = err.flatMap((l) => l.split("\n"));
  const keep = lines.filter((l) => /^error:/.test(l) || /^ERROR:/.test(l));
  return (keep.length ? keep : lines.slice(-5)).join(" | ").slice(0, 800);
}

/** Removes the project's temp copy. */
export function cleanUp(d: Deployed): void {
  rmSync(d.dir, { recursive: true, force: true });
}
