import { readFileSync } from "node:fs";
import { parse } from "yaml";

/** One `fire` item of a plan entry (plans/*.yaml; README.md in this folder). */
export interface Fire {
  webhook?: string;
  manual?: string;
  schedule?: string;
  event?: string;
  method?: string;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  /** A webhook's path after its URL (`/meow`). */
  path?: string;
  /** A webhook's query parameters. */
  query?: Record<string, string>;
  inputs?: Record<string, unknown>;
  connection?: string;
  payload?: unknown;
  kind?: string;
  /** False: do not wait for the sessions it starts to end before the next item (they are
   * waited for at the entry's end): a session that waits for a later item's event. */
  wait?: boolean;
  durable?: boolean;
  /** Seconds to wait before sending (an earlier `wait: false` session reaching its subscribe). */
  delay?: number;
  /** 0: the fire is meant to start no session (its event goes to a subscriber); ok when
   * accepted and its own `expect` holds over the entry's sessions. */
  sessions?: number;
  /** A form-encoded body (`application/x-www-form-urlencoded`). */
  form?: Record<string, string>;
  /** Prints and calls this item's own sessions (and the stand-in during it) must show. */
  expect?: { prints?: string[]; calls?: string[]; answer?: string[] };
}

export interface Expect {
  states?: string[];
  prints?: string[];
  calls?: string[];
}

export interface Entry {
  project: string;
  verdict?: "runs" | "partly" | "blocked";
  why?: string;
  packages?: string[];
  /** Files of the project's copy removed before the deploy (a `requirements.txt` naming
   * packages this machine's index lacks): said in the result, never silent. */
  set_aside?: string[];
  /** Sessions' HTTP clients take the stand-in as their proxy (HTTP_PROXY, for `http://` URLs a
   * project names in its code: routes "GET http://host/path"); loopback stays direct. */
  proxy?: boolean;
  vars?: Record<string, Record<string, unknown>>;
  routes?: Record<string, unknown>;
  fire: Fire[];
  expect?: Expect;
  timeout?: number;
  how?: string;
}

/** A plan that cannot be run: the entry and field it names. */
export class PlanError extends Error {}

const ENTRY_KEYS = new Set([
  "project",
  "verdict",
  "why",
  "packages",
  "set_aside",
  "proxy",
  "vars",
  "routes",
  "fire",
  "expect",
  "timeout",
  "how",
]);
const FIRE_KINDS = ["webhook", "manual", "schedule", "event"] as const;
const FIRE_KEYS = new Set([
  ...FIRE_KINDS,
  "method",
  "json",
  "body",
  "headers",
  "query",
  "path",
  "inputs",
  "connection",
  "payload",
  "kind",
  "wait",
  "durable",
  "expect",
  "delay",
  "sessions",
  "form",
]);
const EXPECT_KEYS = new Set(["states", "prints", "calls", "answer"]);
const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
const strings = (x: unknown) => Array.isArray(x) && x.every((s) => typeof s === "string");

function checkFire(where: string, f: unknown): void {
  if (!isObject(f)) throw new PlanError(`${where}: expected a mapping`);
  for (const k of Object.keys(f)) {
    if (!FIRE_KEYS.has(k)) throw new PlanError(`${where}.${k}: unknown field`);
  }
  const kinds = FIRE_KINDS.filter((k) => k in f);
  if (kinds.length !== 1) {
    throw new PlanError(`${where}: expected exactly one of ${FIRE_KINDS.join(", ")}`);
  }
  const kind = kinds[0] as string;
  if (typeof f[kind] !== "string" || !f[kind]) {
    throw new PlanError(`${where}.${kind}: expected a non-empty string`);
  }
  if (kind === "event" && typeof f.connection !== "string") {
    throw new PlanError(`${where}.connection: an event names its connection`);
  }
  if (kind === "manual" && !/^[^:]+\.py:\w+$/.test(f.manual as string)) {
    throw new PlanError(`${where}.manual: expected "file.py:function"`);
  }
  if ("inputs" in f && !isObject(f.inputs))
    throw new PlanError(`${where}.inputs: expected a mapping`);
  if ("path" in f && typeof f.path !== "string")
    throw new PlanError(`${where}.path: expected text`);
  if ("query" in f && !isObject(f.query)) throw new PlanError(`${where}.query: expected a mapping`);
  if ("headers" in f && !isObject(f.headers)) {
    throw new PlanError(`${where}.headers: expected a mapping`);
  }
  if ("expect" in f) checkExpect(`${where}.expect`, f.expect);
  if ("body" in f && typeof f.body !== "string")
    throw new PlanError(`${where}.body: expected text`);
  if (["json", "body", "form"].filter((k) => k in f).length > 1) {
    throw new PlanError(`${where}: one of json, body, form`);
  }
  if ("form" in f && !isObject(f.form)) throw new PlanError(`${where}.form: expected a mapping`);
  if ("delay" in f && !(typeof f.delay === "number" && f.delay >= 0)) {
    throw new PlanError(`${where}.delay: expected seconds`);
  }
  if ("sessions" in f && f.sessions !== 0)
    throw new PlanError(`${where}.sessions: only 0 is taken`);
}

function checkExpect(where: string, e: unknown): void {
  if (!isObject(e)) throw new PlanError(`${where}: expected a mapping`);
  for (const [k, v] of Object.entries(e)) {
    if (!EXPECT_KEYS.has(k)) throw new PlanError(`${where}.${k}: unknown field`);
    if (!strings(v)) throw new PlanError(`${where}.${k}: expected a list of strings`);
  }
}

function checkEntry(i: number, e: unknown): Entry {
  if (!isObject(e)) throw new PlanError(`entry ${i + 1}: expected a mapping`);
  const where = `entry ${i + 1} (${String(e.project ?? "?")})`;
  for (const k of Object.keys(e)) {
    if (!ENTRY_KEYS.has(k)) throw new PlanError(`${where}.${k}: unknown field`);
  }
  if (typeof e.project !== "string" || !e.project) {
    throw new PlanError(`${where}.project: expected a folder under --kittehub`);
  }
  if (e.verdict !== undefined && !["runs", "partly", "blocked"].includes(e.verdict as string)) {
    throw new PlanError(`${where}.verdict: expected runs, partly or blocked`);
  }
  if (e.packages !== undefined && !strings(e.packages)) {
    throw new PlanError(`${where}.packages: expected a list of names`);
  }
  if (e.proxy !== undefined && typeof e.proxy !== "boolean") {
    throw new PlanError(`${where}.proxy: expected true or false`);
  }
  if (e.set_aside !== undefined && !strings(e.set_aside)) {
    throw new PlanError(`${where}.set_aside: expected a list of file names in the project`);
  }
  if (e.vars !== undefined) {
    if (!isObject(e.vars)) throw new PlanError(`${where}.vars: expected a mapping`);
    for (const [c, v] of Object.entries(e.vars)) {
      if (!isObject(v)) throw new PlanError(`${where}.vars.${c}: expected a mapping`);
    }
  }
  if (e.routes !== undefined) {
    if (!isObject(e.routes)) throw new PlanError(`${where}.routes: expected a mapping`);
    for (const k of Object.keys(e.routes)) {
      if (!/^[A-Z*]+ (\/|http:\/\/)\S*$/.test(k)) {
        throw new PlanError(
          `${where}.routes."${k}": expected "METHOD /path" or "METHOD http://host/path"`,
        );
      }
    }
  }
  const fire = e.fire ?? [];
  if (!Array.isArray(fire)) throw new PlanError(`${where}.fire: expected a list`);
  for (const [j, f] of fire.entries()) checkFire(`${where}.fire[${j}]`, f);
  if (e.expect !== undefined) checkExpect(`${where}.expect`, e.expect);
  if (e.timeout !== undefined && !(typeof e.timeout === "number" && e.timeout > 0)) {
    throw new PlanError(`${where}.timeout: expected seconds, a positive number`);
  }
  return { ...(e as unknown as Entry), fire: fire as Fire[] };
}

/**
 * The plan file's entries, checked; `only` keeps the named projects (each must be in the plan).
 * @example loadPlan("test/kittehub/plans/basics.yaml", ["quickstart"])
 */
export function loadPlan(file: string, only: string[] = []): Entry[] {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new PlanError(`${file}: ${(e as Error).message.split("\n")[0]}`);
  }
  if (!Array.isArray(doc)) throw new PlanError(`${file}: expected a list of entries`);
  const entries = doc.map((e, i) => checkEntry(i, e));
  for (const name of only) {
    if (!entries.some((e) => e.project === name)) {
      throw new PlanError(`--only ${name}: no entry for it in ${file}`);
    }
  }
  return only.length ? entries.filter((e) => only.includes(e.project)) : entries;
}
