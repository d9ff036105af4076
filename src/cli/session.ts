import { defineCommand } from "citty";
import type { SessionLogEntry, SessionRecord } from "../model/records.ts";
import { startedBy } from "../wire/trigger-words.ts";
import { clientFromEnv } from "./client.ts";
import { CliError, ExitError, type Io, UsageError } from "./io.ts";
import { type ListAnswer, listNotice, timeArg } from "./list-args.ts";
import {
  formatEntry,
  type JournalLine,
  journalLines,
  sessionErrorLines,
  sessionHeader,
  table,
  traceLines,
} from "./output.ts";
import { printWatch } from "./session-watch.ts";
import { wireText } from "./wire-text.ts";

const STATES = ["created", "running", "completed", "error", "stopped"];

const idArg = {
  type: "positional",
  required: true,
  valueHint: "ses_id",
  description: "The session's id",
} as const;

function sessionPath(id: string, tail = ""): string {
  return `/api/v1/sessions/${encodeURIComponent(id)}${tail}`;
}

/**
 * The rows of `session list`.
 * @example sessionTable([]) // ["no sessions"]
 */
export function sessionTable(sessions: SessionRecord[]): string[] {
  if (sessions.length === 0) return ["no sessions"];
  const rows = sessions.map((s) => [s.id, s.project_name, startedBy(s), s.state, s.created_at]);
  return table(["ID", "PROJECT", "TRIGGER", "STATE", "CREATED"], rows);
}

/**
 * A print as `session prints` shows it.
 * @example printLine({ t: "2025-01-01T00:00:00.000Z", text: "hi\n" }, true) // "[2025-01-01T00:00:00.000Z] hi"
 */
export function printLine(p: { t: string; text: string }, timestamps: boolean): string {
  const text = p.text.endsWith("\n") ? p.text.slice(0, -1) : p.text;
  return timestamps ? `[${p.t}] ${text}` : text;
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1)
    throw new UsageError(`--${flag}: expected a whole number above 0, got "${value}"`);
  return n;
}

/** `session list`: sessions, newest first, filtered by project, trigger, state, time and search. */
function listCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  return defineCommand({
    meta: { name: "list", description: "List sessions, newest first" },
    args: {
      project: { type: "string", alias: "p", description: "Only this project's sessions" },
      trigger: { type: "string", description: "Only this trigger's sessions (by name)" },
      state: { type: "enum", options: STATES, description: "Only sessions in this state" },
      since: {
        type: "string",
        valueHint: "time|age",
        description: "Only sessions created since (ISO-8601, or an age: 30m, 2h, 7d)",
      },
      until: { type: "string", valueHint: "time|age", description: "Only sessions created before" },
      search: {
        type: "string",
        valueHint: "text",
        description: "A session id, an event id, or text in the session's prints or error",
      },
      limit: { type: "string", valueHint: "n", description: "At most this many" },
      before: {
        type: "string",
        valueHint: "ses_id",
        description: "Only sessions older than this one (the next page, as the notice says)",
      },
    },
    async run({ args }) {
      const query = new URLSearchParams();
      const limit = positiveInt(args.limit, "limit");
      if (args.project) query.set("project", args.project);
      // Even an empty one: the service says what is wrong with it.
      if (args.trigger !== undefined) query.set("trigger", String(args.trigger));
      if (args.state) query.set("state", args.state);
      if (args.since) query.set("since", timeArg(String(args.since), "since"));
      if (args.until) query.set("until", timeArg(String(args.until), "until"));
      if (args.search) query.set("q", String(args.search));
      if (limit !== undefined) query.set("limit", String(limit));
      if (args.before) query.set("before", String(args.before));
      const qs = query.size > 0 ? `?${query}` : "";
      const res = await client().get<{ sessions: SessionRecord[] } & ListAnswer>(
        `/api/v1/sessions${qs}`,
      );
      for (const line of sessionTable(res.sessions)) io.out(line);
      // On stderr, so that stdout stays rows for a pipe.
      const notice = listNotice(res.sessions.length, res);
      if (notice) io.err(notice);
    },
  });
}

/** `session log`: the header, every log entry, the journal, the outcome and the error. */
function logCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  return defineCommand({
    meta: { name: "log", description: "Show a session's log" },
    args: { id: idArg },
    async run({ args }) {
      const res = await client().get<{
        session: SessionRecord;
        entries: SessionLogEntry[];
        journal?: JournalLine[];
      }>(sessionPath(args.id, "/log"));
      io.out(sessionHeader(res.session));
      for (const line of traceLines(res.session)) io.out(line);
      for (const entry of res.entries) io.out(formatEntry(entry));
      for (const line of journalLines(res.journal ?? [])) io.out(line);
      if (res.session.outcome_value !== undefined) {
        io.out(`outcome: ${wireText(res.session.outcome_value)}`);
      }
      for (const line of sessionErrorLines(res.session)) io.out(line);
    },
  });
}

/** `prints --follow`: the print entries of the watch stream; the end state goes to stderr. */
async function followPrints(io: Io, id: string, timestamps: boolean): Promise<void> {
  let end: SessionRecord | undefined;
  await clientFromEnv(io.env).events(sessionPath(id, "/watch"), (event, data) => {
    if (event === "end") {
      end = JSON.parse(data) as SessionRecord;
      return "stop";
    }
    const entry = event === "message" ? (JSON.parse(data) as SessionLogEntry) : undefined;
    if (entry?.kind === "print") io.out(printLine(entry, timestamps));
    return undefined;
  });
  if (!end) throw new CliError(`the stream of session ${id} closed before the session ended`);
  io.err(`session ${id}: ${end.state}`);
  for (const line of sessionErrorLines(end)) io.err(line);
  if (end.state === "error") throw new ExitError(1);
}

/** `session prints`: what a session printed; a project name means its latest session. */
function printsCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  return defineCommand({
    meta: { name: "prints", description: "Show what a session printed (a project: its latest)" },
    args: {
      target: {
        type: "positional",
        required: true,
        valueHint: "project|ses_id",
        description: "A project name or a session id",
      },
      timestamps: {
        type: "boolean",
        default: true,
        description: "Start each line with its time",
        negativeDescription: "Print the text only",
      },
      follow: {
        type: "boolean",
        alias: "f",
        description: "Keep printing as the session prints, until it ends",
      },
    },
    async run({ args }) {
      let id = args.target;
      if (!id.startsWith("ses_")) {
        const q = new URLSearchParams({ project: id, limit: "1" });
        const res = await client().get<{ sessions: SessionRecord[] }>(`/api/v1/sessions?${q}`);
        const latest = res.sessions[0];
        if (!latest) throw new CliError(`project "${id}" has no sessions`);
        id = latest.id;
      }
      const timestamps = args.timestamps !== false;
      if (args.follow) return followPrints(io, id, timestamps);
      const res = await client().get<{ prints: { t: string; text: string }[] }>(
        sessionPath(id, "/prints"),
      );
      for (const p of res.prints) io.out(printLine(p, timestamps));
    },
  });
}

/** `session stop`: asks the service to stop a session. */
function stopCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  return defineCommand({
    meta: { name: "stop", description: "Stop a session" },
    args: { id: idArg },
    async run({ args }) {
      const res = await client().post<{ session?: SessionRecord; state?: string }>(
        sessionPath(args.id, "/stop"),
      );
      io.out(`session ${args.id}: ${res?.session?.state ?? res?.state ?? "stopped"}`);
    },
  });
}

/**
 * `session rerun`: a new session from a session's stored event; `--from-failure` / `--from-step
 * N`: a durable one's journal reused up to its failed step, or step N.
 */
function rerunCommand(io: Io) {
  const client = () => clientFromEnv(io.env);
  return defineCommand({
    meta: { name: "rerun", description: "Start a new session from a session's stored event" },
    args: {
      id: idArg,
      "from-failure": {
        type: "boolean",
        description:
          "Durable, failed: reuse its journal up to the failed step, run live from there",
      },
      "from-step": {
        type: "string",
        valueHint: "n",
        description: "Durable, ended: reuse its journal's steps before step N, run live from N",
      },
    },
    async run({ args }) {
      const step = args["from-step"];
      if (args["from-failure"] && step !== undefined)
        throw new UsageError("give --from-failure or --from-step, not both");
      if (step !== undefined && !/^\d+$/.test(step))
        throw new UsageError(`--from-step: expected a step number (0 or more), got "${step}"`);
      const from = args["from-failure"]
        ? "?from=failure"
        : step !== undefined
          ? `?from=${step}`
          : "";
      const res = await client().post<{ session: SessionRecord }>(
        sessionPath(args.id, `/rerun${from}`),
      );
      const reused = res.session.rerun_from_step
        ? `, steps 0-${res.session.rerun_from_step - 1} reused`
        : "";
      io.out(`session ${res.session.id}: ${res.session.state} (re-run of ${args.id}${reused})`);
    },
  });
}

/** `session watch`: the log as it grows, until the session ends (exit 1 on error). */
function watchCommand(io: Io) {
  return defineCommand({
    meta: { name: "watch", description: "Follow a session's log until it ends" },
    args: { id: idArg },
    run: ({ args }) => printWatch(io, args.id),
  });
}

/** `cli session …`: list, log, prints, start, stop, rerun, watch; each its own factory. */
export default function sessionCommand(io: Io) {
  return defineCommand({
    meta: {
      name: "session",
      description: "Sessions: list, log, prints, start, stop, rerun, watch",
    },
    subCommands: {
      list: listCommand(io),
      start: () => import("./session-start.ts").then((m) => m.default(io)),
      log: logCommand(io),
      prints: printsCommand(io),
      stop: stopCommand(io),
      rerun: rerunCommand(io),
      watch: watchCommand(io),
    },
  });
}
