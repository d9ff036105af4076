import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { sessionRecord, T } from "../../test/support/records.ts";
import { whereLines } from "./config.ts";
import { connectionTable } from "./connection.ts";
import { readAll, stripOneNewline } from "./io.ts";
import { formatEntry, journalLines, sessionErrorLines, shortDuration, table } from "./output.ts";
import { printLine, sessionTable } from "./session.ts";
import { triggerTable } from "./trigger.ts";
import { target } from "./var.ts";

const t = T;

const session = sessionRecord({ is_sync: true });

describe("stdin", () => {
  it("strips exactly one trailing newline", () => {
    expect(stripOneNewline("s3cret\n")).toBe("s3cret");
    expect(stripOneNewline("s3cret\r\n")).toBe("s3cret");
    expect(stripOneNewline("a\nb\n\n")).toBe("a\nb\n");
    expect(stripOneNewline("plain")).toBe("plain");
    expect(stripOneNewline("")).toBe("");
  });

  it("reads a stream to its end as UTF-8", async () => {
    const euro = Buffer.from("€");
    const stream = Readable.from([euro.subarray(0, 1), euro.subarray(1), Buffer.from("\n")]);
    expect(await readAll(stream)).toBe("€\n");
  });
});

describe("output", () => {
  it("aligns tables without trailing blanks", () => {
    expect(table(["A", "LONGER", "C"], [["xyz", "1", ""]])).toEqual(["A    LONGER  C", "xyz  1"]);
  });

  it("lists triggers", () => {
    expect(triggerTable([])).toEqual(["no triggers"]);
    const lines = triggerTable([
      {
        id: "trg_1",
        project: "demo",
        name: "hook",
        webhook_path: "/webhooks/abc",
        event_type: "",
        call: "handlers.py:on_hook",
        is_sync: true,
        is_durable: false,
        reuse_process: true,
      },
      {
        id: "trg_2",
        project: "demo",
        name: "source",
        webhook_path: "/webhooks/def",
        event_type: "post",
        call: null,
        is_sync: false,
        is_durable: true,
      },
      {
        id: "trg_3",
        project: "demo",
        name: "nightly",
        type: "schedule",
        webhook_path: "",
        event_type: "",
        schedule: "0 3 * * *",
        timezone: "Europe/Paris",
        next_fire: "2026-01-02T02:00:00.000Z",
        call: "handlers.py:on_tick",
        is_sync: false,
        is_durable: true,
      },
      {
        id: "trg_4",
        project: "demo",
        name: "msg",
        type: "connection",
        webhook_path: "",
        event_type: "message",
        call: "handlers.py:on_msg",
        is_sync: false,
        is_durable: true,
        active: false,
      },
      {
        id: "trg_5",
        project: "demo",
        name: "pr",
        type: "connection",
        webhook_path: "",
        event_type: "pull_request",
        call: "handlers.py:on_pr",
        is_sync: false,
        is_durable: true,
        active: true,
      },
    ]);
    expect(lines).toEqual([
      "NAME     PROJECT  TYPE                            EVENT                     CALL                 NEXT_FIRE                 WEBHOOK_PATH   ID",
      "hook     demo     sync, reuse process             *                         handlers.py:on_hook  -                         /webhooks/abc  trg_1",
      "source   demo     async, durable                  post                      -                    -                         /webhooks/def  trg_2",
      "nightly  demo     schedule, durable               0 3 * * * (Europe/Paris)  handlers.py:on_tick  2026-01-02T02:00:00.000Z  -              trg_3",
      "msg      demo     connection (inactive), durable  message                   handlers.py:on_msg   -                         -              trg_4",
      "pr       demo     connection, durable             pull_request              handlers.py:on_pr    -                         -              trg_5",
    ]);
  });

  it("lists connections with status and URL", () => {
    expect(connectionTable([], "http://h")).toEqual(["no connections"]);
    const base = { id: "con_1", project: "demo" };
    expect(
      connectionTable(
        [
          {
            ...base,
            name: "gh",
            integration: "github",
            inbound_path: "/inbound/abc",
            status: { state: "needs", needs: ["pat_secret or webhook_secret", "pat"] },
          },
          {
            ...base,
            name: "sl",
            integration: "slack",
            inbound_path: "/inbound/def",
            status: { state: "ready", needs: [] },
          },
          {
            ...base,
            name: "lin",
            integration: "linear",
            inbound_path: "",
            status: { state: "no_events", needs: [] },
          },
          {
            ...base,
            name: "sl2",
            integration: "slack",
            inbound_path: "/inbound/ghi",
            status: { state: "needs", needs: ["authorization", "signing_secret"] },
          },
        ],
        "http://h:1",
      ),
    ).toEqual([
      "NAME  PROJECT  INTEGRATION  STATUS                                                                   URL",
      "gh    demo     github       needs pat_secret or webhook_secret, pat                                  http://h:1/inbound/abc",
      "sl    demo     slack        ready                                                                    http://h:1/inbound/def",
      "lin   demo     linear       no events (vars only)                                                    -",
      "sl2   demo     slack        needs authorization (cli connection authorize demo/sl2), signing_secret  http://h:1/inbound/ghi",
    ]);
  });

  it("names a connection's var as <connection>__<var>, AutoKitteh's way", () => {
    expect(target({ connection: "demo/gh", name: "pat" })).toEqual({
      env: "demo",
      name: "gh__pat",
    });
    expect(target({ env: "env_1", name: "gh__pat" })).toEqual({ env: "env_1", name: "gh__pat" });
    expect(() => target({ connection: "gh", name: "pat" })).toThrow(/<project>\/<connection>/);
    expect(() => target({ env: "e", connection: "d/g", name: "x" })).toThrow(/not both/);
    expect(() => target({ name: "x" })).toThrow(/--env/);
  });

  it("lists sessions", () => {
    expect(sessionTable([])).toEqual(["no sessions"]);
    expect(sessionTable([session])).toEqual([
      "ID      PROJECT  TRIGGER  STATE      CREATED",
      `ses_01  demo     hook     completed  ${t}`,
    ]);
  });

  it("shows prints with or without their time", () => {
    expect(printLine({ t, text: "hello\n" }, true)).toBe(`[${t}] hello`);
    expect(printLine({ t, text: "hello" }, false)).toBe("hello");
  });

  it("writes one line per log entry", () => {
    expect(formatEntry({ t, kind: "print", text: "hi\n", stream: "stdout" })).toBe(
      `${t} print: hi`,
    );
    expect(formatEntry({ t, kind: "print", text: "oops", stream: "stderr" })).toBe(
      `${t} print (stderr): oops`,
    );
    expect(formatEntry({ t, kind: "state", state: "running" })).toBe(`${t} state: running`);
    expect(formatEntry({ t, kind: "state", state: "error", detail: "interrupted" })).toBe(
      `${t} state: error (interrupted)`,
    );
    expect(
      formatEntry({ t, kind: "activity", function: "fetch", duration_ms: 1.23, ok: true }),
    ).toBe(`${t} activity: fetch 1.2ms ok`);
    expect(
      formatEntry({
        t,
        kind: "activity",
        function: "fetch",
        duration_ms: 1500,
        ok: false,
        error: "ValueError: no",
        replayed: true,
      }),
    ).toBe(`${t} activity: fetch 1.5s error: ValueError: no (replayed)`);
    // Attempts under a retry policy: the wait before the next, none left, or not retried.
    const attempt = { t, kind: "activity", function: "f", duration_ms: 2, error: "E: x" } as const;
    const tried = (ok: boolean, retry: { attempt: number; of: number; next_in_ms?: number }) =>
      formatEntry({ ...attempt, ok, retry });
    expect(tried(false, { attempt: 1, of: 5, next_in_ms: 1500 })).toBe(
      `${t} activity: f 2ms error: E: x (attempt 1 of 5, next in 1.5 s)`,
    );
    expect(tried(false, { attempt: 5, of: 5 })).toBe(
      `${t} activity: f 2ms error: E: x (attempt 5 of 5)`,
    );
    expect(tried(false, { attempt: 1, of: 5 })).toBe(
      `${t} activity: f 2ms error: E: x (attempt 1 of 5, not retried)`,
    );
    expect(tried(true, { attempt: 3, of: 5 })).toBe(`${t} activity: f 2ms ok (attempt 3 of 5)`);
    const outcome = { t, kind: "outcome", status_code: 201, headers: {}, body: null } as const;
    expect(formatEntry({ ...outcome, more: false, sent: true })).toBe(`${t} outcome: 201 (final)`);
    expect(formatEntry({ ...outcome, more: true, sent: false })).toBe(`${t} outcome: 201 (more)`);
    expect(formatEntry({ ...outcome, more: false, sent: false })).toBe(
      `${t} outcome: 201 (final, not sent)`,
    );
    expect(formatEntry({ t, kind: "warning", text: "late outcome" })).toBe(
      `${t} warning: late outcome`,
    );
    expect(
      formatEntry({ t, kind: "subscribe", subscription_id: "sub_1", source: "hook", filter: "" }),
    ).toBe(`${t} subscribe: hook -> sub_1`);
    expect(formatEntry({ t, kind: "event", subscription_id: "sub_1", event_id: "evt_1" })).toBe(
      `${t} event: evt_1 (sub_1)`,
    );
    expect(formatEntry({ t, kind: "event", subscription_id: "sub_1", event_id: null })).toBe(
      `${t} event: none (timeout)`,
    );
    const unknown = { t, kind: "journal", seq: 3 } as unknown as Parameters<typeof formatEntry>[0];
    expect(formatEntry(unknown)).toBe(`${t} journal: {"seq":3}`);
  });

  it("ends an errored session's log with its error and traceback", () => {
    expect(sessionErrorLines(session)).toEqual([]);
    const error = { message: "ValueError: bad", traceback: "Traceback…\n  line 3\n" };
    expect(sessionErrorLines({ state: "error", error })).toEqual([
      "error: ValueError: bad",
      "Traceback…\n  line 3",
    ]);
  });

  it("shows durations briefly", () => {
    expect(shortDuration(0.04)).toBe("0ms");
    expect(shortDuration(12.4)).toBe("12ms");
    expect(shortDuration(2345)).toBe("2.3s");
  });

  it("says where things are", () => {
    expect(whereLines({ HOME: "/h", SVC_URL: "http://svc:1/" })).toEqual([
      "data home: /h/.local/share/hookline  (XDG_DATA_HOME)",
      "config home: /h/.config/hookline  (XDG_CONFIG_HOME)",
      "storage: lmdb (sync=normal)  /h/.local/share/hookline/db/data.mdb  (SVC_STORAGE)",
      "venv: /h/.local/share/hookline/venv",
      "service: http://svc:1  (SVC_URL)",
    ]);
  });
});

describe("journalLines", () => {
  it("shows each step with whether the latest run replayed it", () => {
    expect(
      journalLines([
        { seq: 0, kind: "activity", function: "h.f", ok: true, replayed: true },
        { seq: 1, kind: "subscribe", source: "t", ok: false, replayed: false },
      ]),
    ).toEqual(["journal:", "  #0 activity h.f ok (replayed)", "  #1 subscribe t error (live)"]);
    expect(journalLines([])).toEqual([]);
    const retried = { seq: 2, kind: "activity" as const, function: "h.g", replayed: false };
    expect(
      journalLines([
        { ...retried, ok: true, attempts: 3 },
        { ...retried, ok: false, attempts: 2, retry_at: "2026-01-01T00:00:00.000Z" },
      ]),
    ).toEqual([
      "journal:",
      "  #2 activity h.g ok after 3 attempts (live)",
      "  #2 activity h.g waiting to retry (attempt 2 failed; next at 2026-01-01T00:00:00.000Z) (live)",
    ]);
  });
});
