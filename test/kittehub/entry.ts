import type { SessionRecord } from "../../src/model/records.ts";
import {
  answerCheck,
  type Check,
  ENDED,
  type EntryResult,
  errorText,
  type FireResult,
  finalStates,
  judge,
  settle,
  sleep,
  verdictOf,
} from "./checks.ts";
import { cleanUp, deployEntry } from "./deploy.ts";
import { type EventContext, sendEvent } from "./events.ts";
import { type EventSender, send } from "./fire.ts";
import type { Entry, Fire } from "./plan.ts";
import type { Service } from "./service.ts";
import type { StandIn } from "./stand-in.ts";

export type { EntryResult, FireResult };

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
  if (f.delay) await sleep(f.delay * 1000);
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
  const check = {
    states: f.wait === false ? [...ctx.states, "running", "created"] : ctx.states,
    prints: f.expect?.prints ?? [],
    calls: f.expect?.calls ?? [],
  };
  if (!fresh.length) await noSession(svc, api, name, f, { ctx, mark, running, check, result });
  else await judgeFresh(svc, api, fresh, mark, check, result);
  if (f.sessions === 0 && fresh.length) {
    result.ok = false;
    result.error = [result.error, `expected no session, started ${fresh.length}`]
      .filter(Boolean)
      .join("\n");
  }
  if (!sent.later) answerCheck(result, f.expect?.answer ?? []);
  return result;
}

async function judgeFresh(
  svc: Service,
  api: StandIn,
  fresh: SessionRecord[],
  mark: number,
  check: Check,
  result: FireResult,
): Promise<void> {
  const j = await judge(svc, api, fresh, mark, check);
  result.sessions = fresh.map((s) => s.id);
  result.state = fresh.map((s) => s.state).join(", ");
  result.error = fresh.map(errorText).filter(Boolean).join("\n");
  result.prints_missing = j.prints_missing;
  result.calls_missing = j.calls_missing;
  result.ok = !j.bad.length && !j.prints_missing.length && !j.calls_missing.length;
  if (!result.ok && !result.error && j.bad.length) {
    result.error = `state ${j.bad.map((s) => s.state).join(", ")}, expected ${check.states.join("|")}`;
  }
}

/**
 * A fire that started no session: its event went to a session of this entry waiting in
 * `next_event`. With `sessions: 0` or an `expect` of its own, ok when that expect holds over the
 * entry's sessions (running ones too) and the stand-in's requests since the fire (polled up to
 * 15 s); otherwise ok when a waiting session ended meanwhile.
 */
async function noSession(
  svc: Service,
  api: StandIn,
  name: string,
  f: Fire,
  o: { ctx: FireContext; mark: number; running: string[]; check: Check; result: FireResult },
): Promise<void> {
  const { ctx, mark, running, check, result } = o;
  const own = f.sessions === 0 || check.prints.length > 0 || check.calls.length > 0;
  if (!own) {
    const handed = await handedOn(svc, name, running, ctx.timeoutMs);
    const ids = handed.map((s) => `${s.id} ${s.state}`).join(", ");
    result.state = handed.length ? `no session; an earlier one took it: ${ids}` : "no session";
    const bad = handed.filter((s) => !check.states.includes(s.state));
    result.error = bad.map(errorText).filter(Boolean).join("\n");
    result.ok = handed.length > 0 && !bad.length;
    return;
  }
  const deadline = Date.now() + Math.min(ctx.timeoutMs, 15_000);
  for (;;) {
    const mine = (await svc.sessions(name)).filter((s) => ctx.mine.includes(s.id));
    const j = await judge(svc, api, mine, mark, {
      ...check,
      states: [...ENDED, "running", "created"],
    });
    result.prints_missing = j.prints_missing;
    result.calls_missing = j.calls_missing;
    const states = mine.filter((s) => running.includes(s.id)).map((s) => `${s.id} ${s.state}`);
    result.state = `no session (as planned); the entry's waiting sessions: ${states.join(", ") || "none"}`;
    result.ok = !j.prints_missing.length && !j.calls_missing.length;
    if (result.ok || Date.now() > deadline) return;
    await sleep(500);
  }
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
    const all = await settle(svc, d.name, before, !states.includes("running"), ctx.timeoutMs);
    await collectAnswers(ctx);
    finalStates(e.fire, out.fires, all, states);
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
