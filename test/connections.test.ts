import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import type { DeployResult } from "../src/deploy/index.ts";
import type { SessionRecord } from "../src/model/records.ts";
import { fakeIo } from "./support/cli.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { githubDelivery, slackRequest, standardWebhook } from "./support/signing.ts";
import { until } from "./support/until.ts";

/**
 * GitHub, Slack and HTTP connections through the real service and real Python: signed
 * deliveries over HTTP start the sessions of the connection's triggers and reach subscribers;
 * forged, stale, malformed, oversized and repeated ones store nothing and start nothing.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections");
const GH_SECRET = "gh-s3cret-value";
const SLACK_SECRET = "slack-signing-s3cret";
const WHSEC = `whsec_${Buffer.from("standard-webhooks-key-0123").toString("base64")}`;
const MAX_BODY = 64 * 1024;

describe("connections: inbound events", () => {
  const emu = useEmulator({ maxBody: MAX_BODY });
  let result: DeployResult;
  const url = (name: string) =>
    emu.url + result.connections.find((c) => c.name === name)!.inbound_path;
  const cli = async (...argv: string[]) => {
    const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url } });
    const code = await runCli(argv, io);
    return { code, out, err };
  };
  const eventCount = async () =>
    (await emu.api<{ events: unknown[] }>("/events?project=conns&limit=1000")).events.length;
  const sessions = async () =>
    (await emu.api<{ sessions: SessionRecord[] }>("/sessions?project=conns&limit=1000")).sessions;
  /** The prints of the one session of `trigger` that ends after `before` sessions existed. */
  const nextSessionOf = async (trigger: string, known: Set<string>) => {
    const s = await until(`a session of ${trigger}`, async () =>
      (await sessions()).find((x) => x.trigger_name === trigger && !known.has(x.id)),
    );
    known.add(s.id);
    const ended = await emu.ended(s.id);
    expect(ended.state).toBe("completed");
    return emu.prints(s.id);
  };
  /** A refusal: problem+json with `status`, and nothing stored, nothing started. */
  const refused = async (target: string, init: RequestInit, status: number) => {
    const [events, count] = [await eventCount(), (await sessions()).length];
    const res = await fetch(target, init);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await res.json()) as { detail: string };
    expect(await eventCount()).toBe(events);
    expect((await sessions()).length).toBe(count);
    return problem.detail;
  };

  it("deploys AutoKitteh's layout unchanged: paths, statuses, vars", async () => {
    const files = folderFiles(FIXTURE);
    const manifest = readFileSync(join(FIXTURE, "autokitteh.yaml"), "utf8");
    delete files["autokitteh.yaml"];
    result = await emu.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    for (const name of ["gh", "sl", "hk"]) {
      const line = result.lines.find((l) => l.includes(`connection "${name}"`));
      expect(line).toMatch(/inbound path is "\/inbound\/[0-9a-z]{26}"/);
    }
    expect(result.lines).toContain(
      '[plan] connection "conns/lin": integration "linear" delivers no events here yet (github, slack, http, jira, confluence, telegram, googlecalendar, googledrive, gmail, googleforms and discord do); its triggers will not fire ("issue", stored inactive)',
    );
    // The CLI lists them; Slack and HTTP still need their secrets.
    const listed = await cli("connection", "list", "--project", "conns");
    expect(listed.code).toBe(0);
    const row = (name: string) => listed.out.find((l) => l.startsWith(`${name} `)) ?? "";
    expect(row("gh")).toMatch(
      /github\s+needs pat or install_id\s+http:\/\/127\.0\.0\.1:\d+\/inbound\//,
    );
    expect(row("sl")).toMatch(
      /slack\s+needs authorization \(cli connection authorize conns\/sl\), private_signing_secret or signing_secret\s+http/,
    );
    expect(row("hk")).toMatch(/http\s+needs auth or signing_secret/);
    expect(row("lin")).toMatch(
      /linear\s+needs authorization \(cli connection authorize conns\/lin\)\s+-$/,
    );
    // Secrets set as AutoKitteh does, and as the spec does.
    const set = await cli(
      "var",
      "set",
      "--connection",
      "conns/sl",
      "--secret",
      "signing_secret",
      SLACK_SECRET,
    );
    expect(set).toMatchObject({ code: 0, out: ['var "sl__signing_secret" set in conns/default'] });
    const env = result.project_id;
    const vars = await emu.api<{ vars: { name: string; value: string }[] }>(`/envs/${env}/vars`);
    expect(vars.vars.find((x) => x.name === "gh__webhook_secret")?.value).toBe("********");
    expect(vars.vars.find((x) => x.name === "sl__signing_secret")?.value).toBe("********");
    const again = await cli("connection", "list", "--project", "conns");
    // Its events are verified now; its client still waits for a token (OAuth or pasted).
    expect(again.out.find((l) => l.startsWith("sl "))).toMatch(
      /slack\s+needs authorization \(cli connection authorize conns\/sl\)\s+http/,
    );
  });

  describe("github", () => {
    const known = new Set<string>();
    it("starts the trigger's session with the payload; the filter and event type decide", async () => {
      const pr = { action: "opened", number: 7, pull_request: { number: 7, body: "fixes it" } };
      const res = await fetch(url("gh"), githubDelivery(GH_SECRET, "pull_request", pr));
      expect(res.status).toBe(202);
      const body = (await res.json()) as { event_id: string; session_ids: string[] };
      expect(body.session_ids).toHaveLength(1);
      const prints = await nextSessionOf("pr_opened", known);
      expect(prints).toEqual([
        "pr opened #7 by pull_request",
        "connection id con_ lin http://127.0.0.1:1",
      ]);
      // Another action: stored, no session (the trigger's filter).
      const closed = await fetch(
        url("gh"),
        githubDelivery(GH_SECRET, "pull_request", { ...pr, action: "closed" }),
      );
      expect(((await closed.json()) as { session_ids: string[] }).session_ids).toEqual([]);
    });

    it("makes one slash_command event per command line", async () => {
      const comment = { action: "created", comment: { body: "LGTM\n/deploy staging now\n/retry" } };
      const res = await fetch(url("gh"), githubDelivery(GH_SECRET, "issue_comment", comment));
      expect(((await res.json()) as { session_ids: string[] }).session_ids).toHaveLength(2);
      const a = await nextSessionOf("command", known);
      const b = await nextSessionOf("command", known);
      expect([...a, ...b].sort()).toEqual([
        "command deploy staging now of 2 in issue_comment",
        "command retry  of 2 in issue_comment",
      ]);
    });

    it("answers ping, takes an unknown event type without a session, counts a repeat once", async () => {
      const ping = await fetch(
        url("gh"),
        githubDelivery(GH_SECRET, "ping", { zen: "Keep it simple." }),
      );
      expect(ping.status).toBe(200);
      const before = await eventCount();
      const star = await fetch(
        url("gh"),
        githubDelivery(GH_SECRET, "star", { action: "created" }, { delivery: "dup-1" }),
      );
      expect(star.status).toBe(202);
      const first = (await star.json()) as { event_id: string; session_ids: string[] };
      expect(first.session_ids).toEqual([]);
      const repeat = await fetch(
        url("gh"),
        githubDelivery(GH_SECRET, "star", { action: "created" }, { delivery: "dup-1" }),
      );
      expect(repeat.status).toBe(202);
      expect(repeat.headers.get("idempotent-replayed")).toBe("true");
      expect(((await repeat.json()) as { event_id: string }).event_id).toBe(first.event_id);
      expect(await eventCount()).toBe(before + 1);
    });

    it("refuses bad signatures, a missing header, a wrong content type, an oversized body", async () => {
      const good = githubDelivery(GH_SECRET, "pull_request", { action: "opened" });
      expect(
        await refused(
          url("gh"),
          githubDelivery("wrong", "pull_request", { action: "opened" }),
          401,
        ),
      ).toMatch(/does not match/);
      const headers = { ...(good.headers as Record<string, string>) };
      delete headers["x-hub-signature-256"];
      expect(await refused(url("gh"), { ...good, headers }, 401)).toMatch(/missing/);
      const text = githubDelivery(GH_SECRET, "push", {}, { type: "text/plain" });
      expect(await refused(url("gh"), text, 400)).toMatch(/content type/);
      const big = { pad: "x".repeat(MAX_BODY) };
      expect(await refused(url("gh"), githubDelivery(GH_SECRET, "push", big), 413)).toMatch(
        /exceeds/,
      );
      // Headers over 64 KiB (under Node's own 80 KiB, so the route's check answers): 431.
      const huge = { ...(good.headers as Record<string, string>), "x-big": "h".repeat(70 * 1024) };
      expect(await refused(url("gh"), { ...good, headers: huge }, 431)).toMatch(/64 KiB/);
      // A path that is no connection's: 404.
      expect(await refused(`${emu.url}/inbound/${"0".repeat(26)}`, good, 404)).toMatch(
        /no connection/,
      );
      // The verifier's refusals are counted by reason; the size checks and the 404 are not.
      const metrics = await (await fetch(`${emu.url}/metrics`)).text();
      const count = (reason: string) =>
        metrics.match(
          new RegExp(
            `^hookline_connection_refused_total\\{integration="github",reason="${reason}"\\} (\\d+)`,
            "m",
          ),
        )?.[1];
      expect([count("unauthorized"), count("bad_request")]).toEqual(["2", "1"]);
    });
  });

  describe("slack", () => {
    const known = new Set<string>();
    const callback = (event: Record<string, unknown>, id = `Ev${crypto.randomUUID()}`) =>
      JSON.stringify({
        type: "event_callback",
        event_id: id,
        authorizations: [{ user_id: "UBOT" }],
        event,
      });

    it("answers url_verification after the check, and starts sessions within Slack's rules", async () => {
      const challenge = await fetch(
        url("sl"),
        slackRequest(SLACK_SECRET, '{"type":"url_verification","challenge":"ch-9"}'),
      );
      expect(await challenge.json()).toEqual({ challenge: "ch-9" });
      const mention = await fetch(
        url("sl"),
        slackRequest(SLACK_SECRET, callback({ type: "app_mention", user: "U1", text: "hi bot" })),
      );
      expect(mention.status).toBe(200);
      expect(await mention.text()).toBe("");
      expect(await nextSessionOf("mention", known)).toEqual(["mention hi bot thread='' bot=''"]);
      // message_posted (the spec's name) fires on Slack's message events.
      await fetch(
        url("sl"),
        slackRequest(SLACK_SECRET, callback({ type: "message", user: "U1", text: "hello" })),
      );
      expect(await nextSessionOf("posted", known)).toEqual(["message hello subtype=''"]);
    });

    it("drops the bot's own messages, counts a retried event_id once, stores unknown types", async () => {
      const before = await eventCount();
      const own = await fetch(
        url("sl"),
        slackRequest(SLACK_SECRET, callback({ type: "message", user: "UBOT", text: "me" })),
      );
      expect(own.status).toBe(200);
      expect(await eventCount()).toBe(before);
      const body = callback({ type: "reaction_added", user: "U1" }, "EvRETRY");
      for (let i = 0; i < 3; i++) {
        expect((await fetch(url("sl"), slackRequest(SLACK_SECRET, body))).status).toBe(200);
      }
      expect(await eventCount()).toBe(before + 1);
    });

    it("counts a slash command or an interaction once however often Slack retries it (trigger_id)", async () => {
      const form = "application/x-www-form-urlencoded";
      /** Slack's first try, then its retries (X-Slack-Retry-Num), of one body. */
      const deliver = async (body: string, tries = 3) => {
        for (let n = 0; n < tries; n++) {
          const init = slackRequest(SLACK_SECRET, body, { type: form });
          const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
          if (n) Object.assign(headers, { "x-slack-retry-num": String(n) });
          init.headers = headers;
          const res = await fetch(url("sl"), init);
          expect(res.status).toBe(200);
          expect(await res.text()).toBe("");
        }
      };
      const command = (trigger_id: string, text: string) =>
        new URLSearchParams({ command: "/deploy", text, user_id: "U1", trigger_id }).toString();
      const slashSessions = async () =>
        (await sessions()).filter((s) => s.trigger_name === "slash");
      const before = await eventCount();
      await deliver(command("1111.2222.aaaa", "prod"));
      expect(await eventCount()).toBe(before + 1);
      expect(await nextSessionOf("slash", known)).toEqual(["slash /deploy prod by U1"]);
      expect(await slashSessions()).toHaveLength(1);
      // Another invocation of the same command is another trigger_id: another session.
      await deliver(command("1111.2222.bbbb", "prod"), 1);
      expect(await nextSessionOf("slash", known)).toEqual(["slash /deploy prod by U1"]);
      expect(await slashSessions()).toHaveLength(2);
      const payload = { type: "block_actions", user: { id: "U1" }, trigger_id: "3333.4444.cccc" };
      await deliver(`payload=${encodeURIComponent(JSON.stringify(payload))}`);
      expect(await eventCount()).toBe(before + 3);
    });

    it("refuses forged, stale, unsigned, mistyped and oversized requests", async () => {
      const body = callback({ type: "app_mention", user: "U1", text: "x" });
      expect(await refused(url("sl"), slackRequest("forged", body), 401)).toMatch(/does not match/);
      const stale = Math.floor(Date.now() / 1000) - 301;
      expect(
        await refused(url("sl"), slackRequest(SLACK_SECRET, body, { at: stale }), 401),
      ).toMatch(/5 minutes/);
      expect(
        await refused(
          url("sl"),
          { method: "POST", body, headers: { "content-type": "application/json" } },
          401,
        ),
      ).toMatch(/required/);
      expect(
        await refused(url("sl"), slackRequest(SLACK_SECRET, body, { type: "text/plain" }), 400),
      ).toMatch(/content type/);
      const big = callback({ type: "message", text: "x".repeat(MAX_BODY) });
      expect(await refused(url("sl"), slackRequest(SLACK_SECRET, big), 413)).toMatch(/exceeds/);
    });
  });

  describe("http", () => {
    const known = new Set<string>();
    it("refuses everything until auth or signing_secret is set", async () => {
      const detail = await refused(url("hk"), { method: "POST", body: '{"n":1}' }, 403);
      expect(detail).toMatch(/no auth or signing_secret/);
      const env = result.project_id;
      for (const [name, value] of [
        ["hk__auth", "Bearer t0ken"],
        ["hk__signing_secret", WHSEC],
      ]) {
        await emu.api(`/envs/${env}/vars/${name}`, {
          method: "PUT",
          body: JSON.stringify({ value, secret: true }),
        });
      }
    });

    it("starts a session with both checks passed; the method is the event type", async () => {
      const ok = standardWebhook(WHSEC, '{"n":5}', { extra: { authorization: "Bearer t0ken" } });
      const res = await fetch(url("hk"), ok);
      expect(res.status).toBe(202);
      expect(await nextSessionOf("any_http", known)).toEqual(["http post 5"]);
      // Repeated webhook-id: one event.
      const before = await eventCount();
      const again = await fetch(url("hk"), ok);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await eventCount()).toBe(before);
      // A form body is taken as well (an http connection takes any content type); PATCH: no trigger.
      const form = standardWebhook(WHSEC, "n=1", {
        extra: {
          authorization: "Bearer t0ken",
          "content-type": "application/x-www-form-urlencoded",
        },
      });
      expect((await fetch(url("hk"), form)).status).toBe(202);
      const patch = standardWebhook(WHSEC, '{"n":2}', { extra: { authorization: "Bearer t0ken" } });
      const patched = await fetch(url("hk"), { ...patch, method: "PATCH" });
      expect(((await patched.json()) as { session_ids: string[] }).session_ids).toEqual([]);
      expect(await eventCount()).toBe(before + 2);
    });

    it("refuses a wrong or missing Authorization, a bad or stale signature, an oversized body", async () => {
      const auth = { authorization: "Bearer t0ken" };
      expect(
        await refused(
          url("hk"),
          standardWebhook(WHSEC, "{}", { extra: { authorization: "Bearer nope" } }),
          401,
        ),
      ).toMatch(/Authorization/);
      expect(await refused(url("hk"), standardWebhook(WHSEC, "{}"), 401)).toMatch(
        /Authorization is missing/,
      );
      const other = `whsec_${Buffer.from("another-key").toString("base64")}`;
      expect(await refused(url("hk"), standardWebhook(other, "{}", { extra: auth }), 401)).toMatch(
        /does not match/,
      );
      const stale = Math.floor(Date.now() / 1000) - 301;
      expect(
        await refused(url("hk"), standardWebhook(WHSEC, "{}", { at: stale, extra: auth }), 401),
      ).toMatch(/5 minutes/);
      const big = standardWebhook(WHSEC, JSON.stringify({ n: "x".repeat(MAX_BODY) }), {
        extra: auth,
      });
      expect(await refused(url("hk"), big, 413)).toMatch(/exceeds/);
    });
  });

  describe("subscribers", () => {
    const known = new Set<string>();
    it("a durable session's subscribe(connection) gets the matching event", async () => {
      const hooks = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
        "/triggers?project=conns",
      );
      const hook = hooks.triggers.find((t) => t.name === "wait_push")!;
      const res = await fetch(emu.url + hook.webhook_path, { method: "POST", body: "{}" });
      const { session_id } = (await res.json()) as { session_id: string };
      known.add(session_id);
      await until("the subscription", async () =>
        (await emu.prints(session_id)).includes("subscribed"),
      );
      // Not a push: the subscriber's filter leaves it; then a push, then the poke that ends the
      // wait of a subscriber the push never reached.
      await fetch(url("gh"), githubDelivery(GH_SECRET, "star", {}));
      const push = githubDelivery(GH_SECRET, "push", { ref: "refs/heads/main" });
      expect((await fetch(url("gh"), push)).status).toBe(202);
      const poke = hooks.triggers.find((t) => t.name === "poke")!;
      expect((await fetch(emu.url + poke.webhook_path, { method: "POST" })).status).toBe(202);
      const ended = await emu.ended(session_id);
      expect(ended).toMatchObject({ state: "completed", durable: true });
      expect(await emu.prints(session_id), 'the push reached subscribe("gh")').toEqual([
        "subscribed",
        "got push refs/heads/main",
      ]);
    });

    it("a session's subscribe(slack connection) with a filter gets a Slack event", async () => {
      const hooks = await emu.api<{ triggers: { name: string; webhook_path: string }[] }>(
        "/triggers?project=conns",
      );
      const hook = hooks.triggers.find((t) => t.name === "wait_slack")!;
      const res = await fetch(emu.url + hook.webhook_path, { method: "POST", body: "{}" });
      const { session_id } = (await res.json()) as { session_id: string };
      await until("the subscription", async () =>
        (await emu.prints(session_id)).includes("subscribed"),
      );
      const event = (channel: string, text: string) =>
        JSON.stringify({
          type: "event_callback",
          event_id: `Ev${crypto.randomUUID()}`,
          event: { type: "reaction_added", user: "U1", channel, text },
        });
      await fetch(url("sl"), slackRequest(SLACK_SECRET, event("C2", "other channel")));
      const sent = await fetch(url("sl"), slackRequest(SLACK_SECRET, event("C1", "this one")));
      expect(sent.status).toBe(200);
      const poke = hooks.triggers.find((t) => t.name === "poke")!;
      expect((await fetch(emu.url + poke.webhook_path, { method: "POST" })).status).toBe(202);
      expect((await emu.ended(session_id)).state).toBe("completed");
      expect(await emu.prints(session_id), 'the event reached subscribe("sl")').toEqual([
        "subscribed",
        "got reaction_added this one",
      ]);
    });
  });
});
