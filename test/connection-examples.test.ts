import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { githubDelivery, slackRequest } from "./support/signing.ts";
import { type StandInApi, standInApi } from "./support/stand-in-api.ts";

/**
 * Issue 19's "done": examples/github-triage and examples/slack-bot, deployed unchanged with the
 * CLI and their vars set as a user sets them, answer signed deliveries through their real
 * clients (PyGithub; slack_sdk's test stand-in, slack_sdk not being installable here) against a
 * stand-in API named by `<conn>__base_url`; forged, stale and replayed deliveries start nothing
 * and reach the API not at all.
 */
const PYGITHUB = join(repoRoot, "node_modules", ".cache", "hookline-e2e-pygithub");
const STAND_INS = join(repoRoot, "python-runtime", "tests", "stand_ins");
const GH_SECRET = "gh-hook-s3cret";
const GH_PAT = "ghp_e2eT0ken";
const SLACK_SECRET = "slack-signing-s3cret";
const SLACK_TOKEN = "xoxb-e2e-t0ken";
const savedPath = process.env.PYTHONPATH;

/** PyGithub from this machine's index (pip.conf), in a folder of its own, once per checkout. */
async function pygithubFolder(python: string): Promise<string> {
  if (existsSync(join(PYGITHUB, "github", "__init__.py"))) return PYGITHUB;
  const pip = await execa(
    python,
    [
      "-m",
      "pip",
      "install",
      "--quiet",
      "--disable-pip-version-check",
      "--target",
      PYGITHUB,
      "PyGithub",
    ],
    { all: true, reject: false, stdin: "ignore" },
  );
  if (pip.failed) throw new Error(`pip could not install PyGithub for this test:\n${pip.all}`);
  return PYGITHUB;
}

// The sessions' Python finds PyGithub and the slack_sdk stand-in on PYTHONPATH, which the
// service passes to its workers; set before the emulator starts (hooks run in order).
beforeAll(async () => {
  const folder = await pygithubFolder(await testPython());
  process.env.PYTHONPATH = [folder, STAND_INS, savedPath].filter(Boolean).join(delimiter);
}, 600_000);
afterAll(() => {
  if (savedPath === undefined) delete process.env.PYTHONPATH;
  else process.env.PYTHONPATH = savedPath;
});

describe("connection examples, end to end", () => {
  const emu = useEmulator();
  let api: StandInApi;
  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    const code = await runCli(argv, io);
    // A deploy slower than 1.5 s (a busy machine) says so on stderr: progress, not an error.
    const errors = err.filter((line) => !line.startsWith("deploying… "));
    expect({ code, err: errors }).toEqual({ code: 0, err: [] });
    return out;
  };
  /** `cli deploy` of an example folder: the inbound URL of its one connection, from the output. */
  const deploy = async (example: string, conn: string) => {
    const out = await cli(
      "deploy",
      "--manifest",
      join(repoRoot, "examples", example, "autokitteh.yaml"),
    );
    const line = out.find((l) => l.includes(`connection "${conn}": inbound path is`)) ?? "";
    const path = /inbound path is "(\/inbound\/[0-9a-z]+)"/.exec(line)?.[1];
    expect(path, out.join("\n")).toBeDefined();
    return emu.url + path;
  };
  const sessions = async (project: string) =>
    (await emu.api<{ sessions: SessionRecord[] }>(`/sessions?project=${project}&limit=1000`))
      .sessions;
  /** A refusal: the status, no new session, and nothing reaching the stand-in API. */
  const startsNothing = async (
    project: string,
    target: string,
    init: RequestInit,
    status: number,
  ) => {
    const [count, calls] = [(await sessions(project)).length, api.received.length];
    const res = await fetch(target, init);
    expect(res.status).toBe(status);
    expect((await sessions(project)).length).toBe(count);
    expect(api.received.length).toBe(calls);
    return res;
  };

  beforeAll(async () => {
    api = await standInApi({
      "GET /repos/octo/widgets": (base) => [
        200,
        { id: 1, name: "widgets", full_name: "octo/widgets", url: `${base}/repos/octo/widgets` },
      ],
      "GET /repos/octo/widgets/issues/7": (base) => [
        200,
        { number: 7, state: "open", url: `${base}/repos/octo/widgets/issues/7` },
      ],
      "POST /repos/octo/widgets/issues/7/comments": (_base, body) => [
        201,
        {
          id: 99,
          body: JSON.parse(body).body,
          html_url: "https://github.com/octo/widgets/pull/7#issuecomment-99",
        },
      ],
      "POST /api/auth.test": () => [200, { ok: true, user_id: "UBOT" }],
      "POST /api/chat.postMessage": () => [200, { ok: true, ts: "1700000000.000200" }],
    });
  });
  afterAll(() => api?.close());

  describe("github-triage", () => {
    let inbound = "";
    const pr = {
      action: "opened",
      number: 7,
      pull_request: { number: 7, draft: false, body: "Adds a thing.", user: { login: "ada" } },
      repository: { full_name: "octo/widgets" },
    };

    it("deploys unchanged; its vars are set with cli var set --connection", async () => {
      inbound = await deploy("github-triage", "github_conn");
      const conn = "github_triage/github_conn";
      await cli("var", "set", "--connection", conn, "--secret", "pat", GH_PAT);
      await cli("var", "set", "--connection", conn, "--secret", "pat_secret", GH_SECRET);
      await cli("var", "set", "--connection", conn, "base_url", api.url);
      const listed = await cli("connection", "list", "--project", "github_triage");
      expect(listed.find((l) => l.startsWith("github_conn "))).toMatch(/github\s+ready/);
    });

    it("forged deliveries start nothing", async () => {
      await startsNothing(
        "github_triage",
        inbound,
        githubDelivery("not-the-secret", "pull_request", pr),
        401,
      );
      const unsigned = githubDelivery(GH_SECRET, "pull_request", pr);
      (unsigned.headers as Record<string, string>)["x-hub-signature-256"] = "sha256=00";
      await startsNothing("github_triage", inbound, unsigned, 401);
    });

    it("a signed pull_request opened delivery comments through PyGithub with the token", async () => {
      const delivery = githubDelivery(GH_SECRET, "pull_request", pr, { delivery: "gh-e2e-1" });
      const res = await fetch(inbound, delivery);
      expect(res.status).toBe(202);
      const { session_ids } = (await res.json()) as { session_ids: string[] };
      expect(session_ids).toHaveLength(1);
      const ended = await emu.ended(session_ids[0]!);
      expect(ended.state, JSON.stringify(ended)).toBe("completed");
      expect(await emu.prints(session_ids[0]!)).toEqual([
        "commented on #7: https://github.com/octo/widgets/pull/7#issuecomment-99",
      ]);
      const github = api.received.filter((r) => r.path.startsWith("/repos/"));
      expect(github.map((r) => `${r.method} ${r.path}`)).toEqual([
        "GET /repos/octo/widgets",
        "GET /repos/octo/widgets/issues/7",
        "POST /repos/octo/widgets/issues/7/comments",
      ]);
      for (const r of github)
        expect(r.authorization).toMatch(new RegExp(`^(token|Bearer) ${GH_PAT}$`));
      expect(JSON.parse(github[2]!.body)).toEqual({
        body: [
          "Thanks @ada! Before review, please check:",
          "- [ ] tests for the change",
          "- [ ] docs for what a user sees",
          "- [ ] a line in the changelog",
        ].join("\n"),
      });
    });

    it("the same delivery again starts nothing", async () => {
      const again = githubDelivery(GH_SECRET, "pull_request", pr, { delivery: "gh-e2e-1" });
      const res = await startsNothing("github_triage", inbound, again, 202);
      expect(res.headers.get("idempotent-replayed")).toBe("true");
    });
  });

  describe("slack-bot", () => {
    let inbound = "";
    const envelope = (eventId: string) =>
      JSON.stringify({
        type: "event_callback",
        event_id: eventId,
        authorizations: [{ user_id: "UBOT" }],
        event: {
          type: "app_mention",
          user: "U1",
          channel: "C9",
          ts: "1700000000.000100",
          text: "<@UBOT> where is the runbook?",
        },
      });

    it("deploys unchanged; its vars are set with cli var set --connection", async () => {
      inbound = await deploy("slack-bot", "slack_conn");
      const conn = "slack_bot/slack_conn";
      await cli("var", "set", "--connection", conn, "--secret", "private_bot_token", SLACK_TOKEN);
      await cli(
        "var",
        "set",
        "--connection",
        conn,
        "--secret",
        "private_signing_secret",
        SLACK_SECRET,
      );
      await cli("var", "set", "--connection", conn, "base_url", `${api.url}/api/`);
    });

    it("a forged signature and a stale timestamp start nothing", async () => {
      const body = envelope("Ev-forged");
      await startsNothing("slack_bot", inbound, slackRequest("not-the-secret", body), 401);
      const stale = Math.floor(Date.now() / 1000) - 6 * 60;
      await startsNothing(
        "slack_bot",
        inbound,
        slackRequest(SLACK_SECRET, body, { at: stale }),
        401,
      );
    });

    it("a signed app_mention is answered in its thread with the bot token", async () => {
      const before = new Set((await sessions("slack_bot")).map((s) => s.id));
      const res = await fetch(inbound, slackRequest(SLACK_SECRET, envelope("Ev-e2e-1")));
      expect(res.status).toBe(200);
      const [session] = (await sessions("slack_bot")).filter((s) => !before.has(s.id));
      expect(session?.trigger_name).toBe("mentioned");
      const ended = await emu.ended(session!.id);
      expect(ended.state, JSON.stringify(ended)).toBe("completed");
      const slack = api.received.filter((r) => r.path.startsWith("/api/"));
      expect(slack.map((r) => r.path)).toEqual(["/api/auth.test", "/api/chat.postMessage"]);
      for (const r of slack) expect(r.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
      expect(JSON.parse(slack[1]!.body)).toEqual({
        channel: "C9",
        thread_ts: "1700000000.000100",
        text: "<@U1> asked: 'where is the runbook?'. I'll look into it.",
      });
    });

    it("Slack's retry of the same event starts nothing", async () => {
      await startsNothing(
        "slack_bot",
        inbound,
        slackRequest(SLACK_SECRET, envelope("Ev-e2e-1")),
        200,
      );
    });
  });
});
