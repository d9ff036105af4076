import type { SessionRecord } from "../../src/model/records.ts";
import { cleanUp, deployEntry } from "./deploy.ts";
import { type EventContext, sendEvent } from "./events.ts";
import { type EventSender, send } from "./fire.ts";
import type { Entry, Fire } from "./plan.ts";
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

const ENDED = new Set(["completed", "error", "stopped"]);
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Waits until the project's sessions not in `before` have all ended (all but left running when
 * `untilEnd` is false) and no new one came for 2 s; at most `timeoutMs`.
 */
async function settle(
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
function errorText(s: SessionRecord): string {
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

interface Check {
  states: string[];
  prints: string[];
  calls: string[];
}

async function judge(
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

interface FireContext {
  /** Every session id known before this fire (the project's earlier ones, this entry's too). */
  before: Set<string>;
  /** The sessions this entry's fires started, in order. */
  mine: string[];
  timeoutMs: number;
  states: string[];
  events: EventSender;
  /** Answers of requests sent without waiting (`wait: false`), filled at the entry's end. */
  later: { result: FireResult; answer: Promise<string>; expect: string[] }[];
}

/**
 * A fire that started no session may have handed its event to a session of this entry that
 * waits for it (`subscribe` + `next_event`): one of them ending within 15 s says so.
 */
async function handedOn(svc: Service, name: string, waiting: string[], timeoutMs: number) {
  const deadline = Date.now() + Math.min(timeoutMs, 15_000);
  while (waiting.length) {
    const ended = (await svc.sessions(name)).filter(
      (s) => waiting.includes(s.id) && ENDED.has(s.state),
    );
    if (ended.length) return ended;
    if (Date.now() > deadline) return [];
    await sleep(400);
  }
  return [];
}

function newResult(what: string, answer: string): FireResult {
  const empty = { state: "", error: "", prints_missing: [], calls_missing: [], sessions: [] };
  return { what, ok: false, ...empty, answer };
}

async function fireOne(
  svc: Service,
  api: StandIn,
  name: string,
  f: Fire,
  ctx: FireContext,
): Promise<FireResult> {
  const mark = await api.mark();
  const running = (await svc.sessions(name))
    .filter((s) => ctx.mine.includes(s.id) && !ENDED.has(s.state))
    .map((s) => s.id);
  const sent = await send(svc, name, f, ctx.events);
  const result = newResult(sent.what, sent.detail);
  if (!sent.accepted) return { ...result, state: "refused", error: sent.detail };
  if (sent.later) ctx.later.push({ result, answer: sent.later, expect: f.expect?.answer ?? [] });
  const fresh = await settle(svc, name, ctx.before, f.wait !== false, ctx.timeoutMs);
  for (const s of fresh) {
    ctx.before.add(s.id);
    ctx.mine.push(s.id);
  }
  const handed = fresh.length ? [] : await handedOn(svc, name, running, ctx.timeoutMs);
  const check = {
    states: f.wait === false ? [...ctx.states, "running", "created"] : ctx.states,
    prints: f.expect?.prints ?? [],
    calls: f.expect?.calls ?? [],
  };
  const j = await judge(svc, api, fresh.length ? fresh : handed, mark, check);
  result.sessions = fresh.map((s) => s.id);
  result.state = fresh.length
    ? fresh.map((s) => s.state).join(", ")
    : handed.length
      ? `no session; an earlier one took it: ${handed.map((s) => `${s.id} ${s.state}`).join(", ")}`
      : "no session";
  result.error = fresh.map(errorText).filter(Boolean).join("\n");
  result.prints_missing = j.prints_missing;
  result.calls_missing = j.calls_missing;
  const some = fresh.length > 0 || handed.length > 0;
  result.ok = some && !j.bad.length && !j.prints_missing.length && !j.calls_missing.length;
  if (!sent.later) answerCheck(result, f.expect?.answer ?? []);
  if (!result.ok && !result.error && j.bad.length) {
    result.error = `state ${j.bad.map((s) => s.state).join(", ")}, expected ${check.states.join("|")}`;
  }
  return result;
}

/** The answers of requests sent without waiting, each checked for its `expect.answer`. */
async function collectAnswers(ctx: FireContext): Promise<void> {
  for (const { result, answer, expect } of ctx.later) {
    const timeout = sleep(ctx.timeoutMs).then(() => "no answer in time");
    result.answer = await Promise.race([
      answer.catch((e: Error) => `failed: ${e.message}`),
      timeout,
    ]);
    answerCheck(result, expect);
  }
}

/** Fails the fire when its HTTP answer lacks an expected substring. */
function answerCheck(result: FireResult, expect: string[]): void {
  const missing = expect.filter((x) => !result.answer.includes(x));
  if (!missing.length) return;
  result.ok = false;
  const why = `answer ${JSON.stringify(result.answer.slice(0, 200))} lacks ${JSON.stringify(missing)}`;
  result.error = [result.error, why].filter(Boolean).join("\n");
}

/** The verdict the fires measured: every one ok, some, or none. */
function verdictOf(fires: FireResult[]): EntryResult["verdict"] {
  const ok = fires.filter((f) => f.ok).length;
  if (fires.length > 0 && ok === fires.length) return "runs";
  return ok > 0 ? "partly" : "blocked";
}

/**
 * Runs one plan entry: deploy, vars, routes, each fire in order (waiting for its sessions),
 * then the entry's `expect` over all of its sessions (a miss fails its last fire).
 */
export async function runEntry(
  svc: Service,
  api: StandIn,
  kittehub: string,
  e: Entry,
  extra: Pick<EventContext, "discord"> = {},
): Promise<EntryResult> {
  const events: EventSender = (project, f) =>
    sendEvent({ svc, api, entry: e, ...extra }, project, f);
  const out: EntryResult = {
    project: e.project,
    verdict: "blocked",
    planned: e.verdict ?? "",
    fires: [],
    how: e.how ?? "",
    connections: [],
    problems: [],
    calls: [],
  };
  if (e.routes) await api.routes(e.routes);
  const d = await deployEntry(svc, api, kittehub, e);
  out.problems = d.problems;
  out.connections = d.connections;
  try {
    if (d.problems.some((p) => p.startsWith("deploy failed"))) return out;
    const mark = await api.mark();
    const before = new Set((await svc.sessions(d.name)).map((s) => s.id));
    const states = e.expect?.states ?? ["completed"];
    const timeoutMs = (e.timeout ?? 60) * 1000;
    const ctx: FireContext = {
      before: new Set(before),
      mine: [],
      timeoutMs,
      states,
      events,
      later: [],
    };
    for (const f of e.fire) out.fires.push(await fireOne(svc, api, d.name, f, ctx));
    const all = await settle(svc, d.name, before, true, ctx.timeoutMs);
    await collectAnswers(ctx);
    const check = { states, prints: e.expect?.prints ?? [], calls: e.expect?.calls ?? [] };
    const j = await judge(svc, api, all, mark, check);
    out.calls = j.calls;
    const last = out.fires.at(-1);
    const failed = new Set(out.fires.filter((f) => !f.ok).flatMap((f) => f.sessions));
    j.bad = j.bad.filter((s) => !failed.has(s.id));
    if (last && (j.prints_missing.length || j.calls_missing.length || j.bad.length)) {
      last.ok = false;
      last.prints_missing.push(...j.prints_missing);
      last.calls_missing.push(...j.calls_missing);
      const bad = j.bad.map((s) => errorText(s) || `${s.id}: ${s.state}`);
      if (bad.length) last.error = [last.error, ...bad].filter(Boolean).join("\n");
    }
    out.verdict = verdictOf(out.fires);
    return out;
  } finally {
    cleanUp(d);
  }
}
