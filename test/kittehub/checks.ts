import type { SessionRecord } from "../../src/model/records.ts";
import type { Fire } from "./plan.ts";
import type { Service } from "./service.ts";
import type { StandIn } from "./stand-in.ts";

export interface FireResult {
  what: string;
  ok: boolean;
  /** The final states of the sessions it started (`a, b`), or what the service answered. */
  state: string;
  error: string;
  prints_missing: string[];
  calls_missing: string[];
  sessions: string[];
  answer: string;
}

export interface EntryResult {
  project: string;
  verdict: "runs" | "partly" | "blocked";
  planned: string;
  fires: FireResult[];
  how: string;
  connections: string[];
  problems: string[];
  calls: string[];
}

export const ENDED = new Set(["completed", "error", "stopped"]);
export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Waits until the project's sessions not in `before` have all ended (all but left running when
 * `untilEnd` is false) and no new one came for 2 s; at most `timeoutMs`.
 */
export async function settle(
  svc: Service,
  project: string,
  before: Set<string>,
  untilEnd: boolean,
  timeoutMs: number,
): Promise<SessionRecord[]> {
  const start = Date.now();
  let lastKey = "";
  let lastChange = Date.now();
  for (;;) {
    const fresh = (await svc.sessions(project)).filter((s) => !before.has(s.id));
    const key = fresh.map((s) => `${s.id}:${s.state}`).join(",");
    if (key !== lastKey) [lastKey, lastChange] = [key, Date.now()];
    const quiet = Date.now() - lastChange >= 2000;
    const done = !untilEnd || fresh.every((s) => ENDED.has(s.state));
    const waited = Date.now() - start;
    if (quiet && done && (fresh.length > 0 || waited >= 4000)) return fresh;
    if (waited >= timeoutMs) return fresh;
    await sleep(400);
  }
}

/** The first line of a session's error, and its traceback's last lines. */
export function errorText(s: SessionRecord): string {
  if (!s.error) return "";
  const tb = (s.error.traceback ?? "").trim().split("\n").slice(-6).join("\n");
  // A stand-in's 404 lists every route it has: the request it did not know is what matters.
  const text = `${s.id}: ${s.error.message}${tb ? `\n${tb}` : ""}`;
  return text.replace(/, \\?"routes\\?": \[[^\]]*\]/g, ", …");
}

async function printsOf(svc: Service, sessions: SessionRecord[]): Promise<string[]> {
  const all: string[] = [];
  for (const s of sessions) all.push(...(await svc.prints(s.id)));
  return all;
}

export interface Check {
  states: string[];
  prints: string[];
  calls: string[];
}

export async function judge(
  svc: Service,
  api: StandIn,
  sessions: SessionRecord[],
  mark: number,
  check: Check,
): Promise<
  Pick<FireResult, "prints_missing" | "calls_missing"> & { calls: string[]; bad: SessionRecord[] }
> {
  const prints = (await printsOf(svc, sessions)).join("\n");
  const seen = await api.calls(mark, check.calls);
  return {
    prints_missing: check.prints.filter((p) => !prints.includes(p)),
    calls_missing: seen.missing,
    calls: seen.calls,
    bad: sessions.filter((s) => !check.states.includes(s.state)),
  };
}

/** Fails the fire when its HTTP answer lacks an expected substring. */
export function answerCheck(result: FireResult, expect: string[]): void {
  const missing = expect.filter((x) => !result.answer.includes(x));
  if (!missing.length) return;
  result.ok = false;
  const why = `answer ${JSON.stringify(result.answer.slice(0, 200))} lacks ${JSON.stringify(missing)}`;
  result.error = [result.error, why].filter(Boolean).join("\n");
}

/** The final states of `wait: false` items' sessions, checked against the entry's states. */
export function finalStates(
  fires: Fire[],
  results: FireResult[],
  all: SessionRecord[],
  states: string[],
) {
  fires.forEach((f, i) => {
    const r = results[i];
    if (f.wait !== false || !r || !r.sessions.length) return;
    const mine = all.filter((s) => r.sessions.includes(s.id));
    r.state = `${r.state}; at the end: ${mine.map((s) => s.state).join(", ")}`;
    const bad = mine.filter((s) => !states.includes(s.state));
    if (!bad.length) return;
    r.ok = false;
    const why = bad.map((s) => errorText(s) || `${s.id}: ${s.state}, expected ${states.join("|")}`);
    r.error = [r.error, ...why].filter(Boolean).join("\n");
  });
}

/** The verdict the fires measured: every one ok, some, or none. */
export function verdictOf(fires: FireResult[]): EntryResult["verdict"] {
  const ok = fires.filter((f) => f.ok).length;
  if (fires.length > 0 && ok === fires.length) return "runs";
  return ok > 0 ? "partly" : "blocked";
}
