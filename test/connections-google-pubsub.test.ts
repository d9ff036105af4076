import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import { fakeIo } from "./support/cli.ts";
import { connectionProject } from "./support/connection-project.ts";
import { useEmulator } from "./support/emulator.ts";
import { pushTo, type StandInPubsub, signJwt, standInPubsub } from "./support/google-pubsub.ts";
import { until } from "./support/until.ts";

/**
 * Gmail and Google Forms connections holding an OAuth token, through the real service and real
 * Python: the service makes a Gmail watch (`users.watch` on the topic of `GMAIL_PUBSUB_TOPIC`)
 * and the form's two watches at a stand-in Google on loopback; Pub/Sub pushes to the shared
 * routes, verified by the OIDC token signed with the stand-in's key (its JWKS served to the
 * service), make the service read the mailbox's history or the form with the connection's
 * token and start the triggers' sessions; forged, expired, wrong-audience tokens are refused
 * with nothing read or stored; the watches are renewed, and stopped when the connections go.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-pubsub");
const TOKEN = "google-pubsub-e2e-access-token";
const SETTINGS = ["SVC_GOOGLE_JWKS_URL", "GMAIL_PUBSUB_TOPIC", "SVC_GOOGLE_FORMS_PUBSUB_TOPIC"];

describe("connections: Gmail and Google Forms through Cloud Pub/Sub push", () => {
  let google: StandInPubsub;
  const saved = SETTINGS.map((n) => process.env[n]);
  beforeAll(async () => {
    google = await standInPubsub(TOKEN, "set below");
    google.lifeMs = 8000; // the first watches live 8 s: renewed halfway by the timer
    process.env.SVC_GOOGLE_JWKS_URL = google.jwksUrl;
    process.env.GMAIL_PUBSUB_TOPIC = "projects/p/topics/gmail"; // AutoKitteh's name for it
    process.env.SVC_GOOGLE_FORMS_PUBSUB_TOPIC = "projects/p/topics/forms";
  });
  afterAll(async () => {
    SETTINGS.forEach((n, i) => {
      if (saved[i] === undefined) delete process.env[n];
      else process.env[n] = saved[i];
    });
    await google.close();
  });
  const logLines: string[] = [];
  const emu = useEmulator({}, (line) => logLines.push(line));
  const project = connectionProject(emu, "google_pubsub", FIXTURE);
  const { deploy, counts } = project;
  const route = (kind: string) => `${emu.url}/google/pubsub/${kind}`;
  const jwt = (kind: string, claims: Record<string, unknown> = {}) =>
    google.token({ aud: route(kind), ...claims });
  const cli = async (...argv: string[]) => {
    const { io } = fakeIo({ env: { SVC_URL: emu.url } });
    return runCli(argv, io);
  };
  const setVar = (conn: string, ...args: string[]) =>
    cli("var", "set", "--connection", `google_pubsub/${conn}`, ...args);
  const vars = (conn: string) => project.vars(conn);
  const sessionPrints = async (res: Response) => {
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    const prints: string[] = [];
    for (const id of session_ids) {
      expect((await emu.ended(id)).state).toBe("completed");
      prints.push(...(await emu.prints(id)));
    }
    return prints;
  };
  const watchId = (type: string) => google.forms.filter((w) => w.eventType === type).at(-1)!.id;

  it("makes the Gmail watch and the form's two watches once the token is set", async () => {
    const deployed = await deploy();
    // Where Pub/Sub pushes: the shared route of each kind, shown as the connection's path.
    const paths = Object.fromEntries(deployed.connections.map((c) => [c.name, c.inbound_path]));
    expect(paths).toEqual({ mail: "/google/pubsub/gmail", form: "/google/pubsub/forms" });
    expect(google.calls).toEqual([]);
    for (const conn of ["mail", "form"]) {
      expect(await setVar(conn, "base_url", google.url)).toBe(0);
      if (conn === "form") expect(await setVar(conn, "FormID", "form1")).toBe(0);
      expect(await setVar(conn, "--secret", "oauth_AccessToken", TOKEN)).toBe(0);
    }
    const mail = await until("the Gmail watch's vars", async () => {
      const v = await vars("mail");
      return v.GmailWatchExpiration ? v : undefined;
    });
    expect(mail).toMatchObject({ GmailHistoryID: "100", user_email: "ada@example.com" });
    expect(Date.parse(mail.GmailWatchExpiration!)).toBeGreaterThan(Date.now());
    expect(google.gmail.topic).toBe("projects/p/topics/gmail");
    const form = await until("the form watches' vars", async () => {
      const v = await vars("form");
      return v.FormWatchesExpiration ? v : undefined;
    });
    expect(form.FormSchemaWatchID).toBe(watchId("SCHEMA"));
    expect(form.FormResponsesWatchID).toBe(watchId("RESPONSES"));
    expect(google.forms.every((w) => w.topic === "projects/p/topics/forms")).toBe(true);
    expect(google.calls.every((c) => c.authorized)).toBe(true);
  });

  it("reads the mailbox's history on a push and starts the trigger's session", async () => {
    google.history.push({
      id: "101",
      messagesAdded: [{ message: { id: "m1", threadId: "t1", labelIds: ["INBOX"] } }],
    });
    const data = { emailAddress: "ada@example.com", historyId: 101 };
    const prints = await sessionPrints(await pushTo(route("gmail"), jwt("gmail"), data));
    expect(prints).toEqual(["mailbox_change ada@example.com 101 added=['m1']"]);
    expect(google.calls.some((c) => c.path.includes("history?startHistoryId=100"))).toBe(true);
    expect((await vars("mail")).GmailHistoryID).toBe("101");
    // A push whose history another push already read (or a redelivery) makes no event.
    const before = await counts();
    const again = await pushTo(route("gmail"), jwt("gmail"), data);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ok: true, events: 0 });
    expect(await counts()).toEqual(before);
  });

  it("reads the latest response or the form on a Forms push", async () => {
    google.responses.push(
      { responseId: "r0", lastSubmittedTime: "2026-12-06T07:00:00Z", answers: {} },
      {
        responseId: "r1",
        lastSubmittedTime: "2026-12-06T08:00:00Z",
        answers: { q1: { questionId: "q1", textAnswers: { answers: [{ value: "yes" }] } } },
      },
    );
    google.form = { formId: "form1", info: { title: "Survey", documentTitle: "Survey" } };
    const attrs = (type: string) => ({ eventType: type, formId: "form1", watchId: watchId(type) });
    const r = await pushTo(route("forms"), jwt("forms"), {}, attrs("RESPONSES"));
    expect(await sessionPrints(r)).toEqual(["responses form1 r1 yes"]);
    const s = await pushTo(route("forms"), jwt("forms"), {}, attrs("SCHEMA"), "msg-schema-1");
    expect(await sessionPrints(s)).toEqual(["schema form1 'Survey'"]);
    // Pub/Sub delivers at least once: the same message again makes no second event.
    const before = await counts();
    const again = await pushTo(route("forms"), jwt("forms"), {}, attrs("SCHEMA"), "msg-schema-1");
    expect(again.status).toBe(200);
    expect(await counts()).toEqual(before);
  });

  it("refuses a push without a good token: problem+json 401, nothing read or stored", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const forged = signJwt(
      { iss: "https://accounts.google.com", aud: route("gmail"), exp: now + 600 },
      other,
      "k1",
    );
    const cases: [string | null, string][] = [
      [null, "Authorization: Bearer"],
      [forged, "signature does not hold"],
      [jwt("gmail", { exp: now - 3600, iat: now - 7200 }), "expired"],
      [jwt("gmail", { aud: "https://elsewhere.example.com/push" }), "audience"],
      [jwt("gmail", { iss: "https://evil.example.com" }), "issuer"],
      [jwt("forms"), "audience"], // a token for the other route
      ["not.a.jwt", "not a JWT"],
    ];
    google.history.push({ id: "102", messagesAdded: [] });
    for (const [token, detail] of cases) {
      const before = await counts();
      const calls = google.calls.length;
      const res = await pushTo(route("gmail"), token, {
        emailAddress: "ada@example.com",
        historyId: 102,
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
      expect(await counts()).toEqual(before);
      expect(google.calls.slice(calls).filter((c) => c.path.includes("/history"))).toEqual([]);
    }
    expect((await vars("mail")).GmailHistoryID).toBe("101");
    google.history.length = 0;
    // Each refusal is one warning line with its reason; no token is ever logged.
    expect(
      logLines.some((l) => l.includes("gmail push refused (401): the token has expired")),
    ).toBe(true);
    const tokens = [TOKEN, ...cases.flatMap(([t]) => (t && t.length > 20 ? [t] : []))];
    expect(logLines.filter((l) => tokens.some((t) => l.includes(t)))).toEqual([]);
  });

  it("answers a push for a mailbox no connection watches 200, storing nothing", async () => {
    const before = await counts();
    const data = { emailAddress: "nobody@example.com", historyId: 5 };
    const res = await pushTo(route("gmail"), jwt("gmail"), data);
    expect(res.status).toBe(200);
    expect(await counts()).toEqual(before);
    const bad = await pushTo(route("gmail"), jwt("gmail"), { historyId: 5 });
    expect(bad.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it("answers 500 when Google fails the read, storing nothing and keeping the cursor", async () => {
    google.history.push({ id: "102", messagesAdded: [{ message: { id: "m2" } }] });
    google.historyDown = true;
    const before = await counts();
    const data = { emailAddress: "ada@example.com", historyId: 102 };
    const res = await pushTo(route("gmail"), jwt("gmail"), data);
    google.historyDown = false;
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await counts()).toEqual(before);
    expect((await vars("mail")).GmailHistoryID).toBe("101");
    // Pub/Sub's retry reads the same history again.
    const prints = await sessionPrints(await pushTo(route("gmail"), jwt("gmail"), data));
    expect(prints).toEqual(["mailbox_change ada@example.com 102 added=['m2']"]);
    expect((await vars("mail")).GmailHistoryID).toBe("102");
  });

  it("renews the watches before they expire", async () => {
    google.lifeMs = 7 * 24 * 3600_000;
    const first = await vars("mail");
    await until(
      "the Gmail watch renewed",
      () =>
        google.gmail.watches >= 2 &&
        google.forms.some((w) => Date.parse(w.expireTime) > Date.now() + 3600_000),
      20_000,
    );
    const renewed = await until("the renewal saved", async () => {
      const v = await vars("mail");
      return v.GmailWatchExpiration !== first.GmailWatchExpiration && v;
    });
    expect(renewed.GmailHistoryID).toBe("102"); // the cursor is kept across renewals
    const form = await vars("form");
    expect(form.FormResponsesWatchID).toBe(watchId("RESPONSES")); // renewed, not made again
    expect(google.forms).toHaveLength(2);
  });

  it("stops the watches once the connections leave the manifest, their vars cleared", async () => {
    const manifest = [
      "version: v1",
      "project:",
      "  name: google_pubsub",
      "  triggers:",
      "    - {name: hook, type: webhook, call: program.py:on_mail}",
    ].join("\n");
    await deploy(manifest);
    await until(
      "Gmail stopped and the form watches deleted",
      () => google.gmail.stopped && google.forms.every((w) => w.deleted),
    );
    const left = await until("the watches' vars cleared", async () => {
      const [mail, form] = [await vars("mail"), await vars("form")];
      return !mail.GmailWatchExpiration && !form.FormWatchesExpiration && { mail, form };
    });
    expect(left.mail.GmailHistoryID).toBeUndefined();
    expect(left.form.FormResponsesWatchID).toBeUndefined();
  });
});
