import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import memory from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { deployBody } from "../../test/support/app.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { sessionRecord } from "../../test/support/records.ts";
import type { WebhookData } from "../model/records.ts";
import { composeApp } from "../platform/compose.ts";
import { createSecretBox } from "../secrets.ts";
import { createStores } from "../storage/records.ts";

const MANIFEST = `
version: v2
project:
  name: demo
vars:
  - name: PLAIN
    value: plain-value
  - name: TOKEN
    value: s3cr3t-value-xyz
    secret: true
triggers:
  - name: hook
    type: webhook
    event_type: post
    call: handlers.py:on_post
    reuse_process: true
  - name: durable
    type: webhook
    call: handlers.py:on_durable
    is_durable: true
`;
const FILES = {
  "handlers.py": "def on_post(event):\n    pass\n\ndef on_durable(event):\n    pass\n",
};
const ORIGIN = "http://localhost";
const TOKEN = "t0ken-for-tests";

/** An app with a fake runtime whose handler prints the body and answers nothing. */
async function setup(apiToken?: string) {
  const fake = fakeRuntime({
    "handlers.py:on_post": (spec, host) => {
      const { body } = spec.event.data as WebhookData;
      host.print(`got ${body.text}\n`, "stdout");
      if (body.text === "fail") throw new Error("failed on purpose");
    },
    "handlers.py:on_durable": async (_spec, wf) => {
      await wf.subscribe("hook", "data.method == 'POST'");
      await wf
        .activity("shop.charge", () => {
          throw new Error("<b>no</b>");
        })
        .catch(() => {});
    },
  });
  const hook = composeApp({
    services: {
      storage: createStorage({ driver: memory() }),
      runtime: fake.runtime,
      secrets: createSecretBox(randomBytes(32)),
    },
    access: { apiToken },
  });
  const auth: Record<string, string> = apiToken ? { authorization: `Bearer ${apiToken}` } : {};
  const init = deployBody(MANIFEST, FILES);
  const res = await hook.app.request("/api/v1/deploy", {
    ...init,
    headers: { ...init.headers, ...auth },
  });
  expect(res.status).toBe(200);
  const triggers = (await (
    await hook.app.request("/api/v1/triggers?project=demo", { headers: auth })
  ).json()) as { triggers: { name: string; webhook_path: string }[] };
  const paths = Object.fromEntries(triggers.triggers.map((t) => [t.name, t.webhook_path]));
  const send = async (body: string, trigger = "hook") => {
    const r = await hook.app.request(paths[trigger]!, { method: "POST", body });
    const { session_id } = (await r.json()) as { session_id: string };
    await hook.sessions.whenEnded(session_id);
    return session_id;
  };
  return { hook, send, auth };
}

/** Deploys one more project (its manifest's lines) and renders its page. */
async function deployedPage(
  hook: Awaited<ReturnType<typeof setup>>["hook"],
  name: string,
  manifest: string[],
  files: Record<string, string> = {},
) {
  const deployed = await hook.app.request("/api/v1/deploy", deployBody(manifest.join("\n"), files));
  expect(deployed.status).toBe(200);
  const doc = (await hook.stores.projects.byName(name))!;
  const html = await (await hook.app.request(`/ui/projects/${doc.project.id}`)).text();
  return { doc, html };
}

const cookieOf = (res: Response) => res.headers.get("set-cookie")!.split(";")[0]!;
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;

function form(fields: Record<string, string>, cookie: string, origin: string | null = ORIGIN) {
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    cookie,
  };
  if (origin) headers.origin = origin;
  return { method: "POST", headers, body: new URLSearchParams(fields).toString() };
}

describe("web UI routes", () => {
  it("escapes user text: a <script> body and print show as text, under a strict CSP", async () => {
    const { hook, send } = await setup();
    const id = await send("<script>alert('x')</script>");
    const res = await hook.app.request(`/ui/sessions/${id}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
    expect(html).toContain("got &lt;script&gt;");
    expect(html).not.toContain("<script>alert");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  it("shows triggers' kinds (reuse process where set), vars by name, never a secret's value or ciphertext", async () => {
    const { hook } = await setup();
    const doc = (await hook.stores.projects.byName("demo"))!;
    const cipher = doc.vars.find((v) => v.name === "TOKEN")!.value;
    const html = await (await hook.app.request(`/ui/projects/${doc.project.id}`)).text();
    expect(html).toContain("TOKEN");
    expect(html).toContain("plain-value");
    expect(html).not.toContain("s3cr3t-value-xyz");
    expect(html).not.toContain(cipher);
    expect(html).toContain(`/webhooks/${doc.triggers[0]!.webhook_id}`);
    expect(html).toContain("<td>async, not durable, reuse process</td>");
    expect(html).toContain("<td>async, durable</td>");
    const page = (name: string) => `/ui/projects/${doc.project.id}/triggers/${name}`;
    const kind = async (name: string) =>
      /<dt>Kind<\/dt><dd>([^<]*)<\/dd>/.exec(
        await (await hook.app.request(page(name))).text(),
      )?.[1];
    expect(await kind("hook")).toBe("async, not durable, reuse process");
    expect(await kind("durable")).toBe("async, durable");
  });

  it("shows each connection's status and inbound URL with a copy button, never its secrets", async () => {
    const { hook } = await setup();
    const manifest = [
      "version: v2",
      "project: {name: linked}",
      "connections:",
      "  - {name: gh, integration: github, vars: [{name: webhook_secret, value: gh-secret-xyz, secret: true}]}",
      "  - {name: sl, integration: slack}",
      "  - {name: lin, integration: linear}",
      "  - {name: tw, integration: twilio}",
    ];
    const { doc, html } = await deployedPage(hook, "linked", manifest);
    const [gh, sl] = doc.connections!;
    expect(html).toContain(`value="${ORIGIN}/inbound/${gh!.inbound_id}"`);
    expect(html).toContain('data-copy="inbound-gh"');
    expect(html).toContain(`value="${ORIGIN}/inbound/${sl!.inbound_id}"`);
    expect(html).toContain("needs pat");
    // Slack and Linear connect with OAuth: neither is authorized yet.
    expect(html).toContain("needs authorization, private_signing_secret or signing_secret");
    expect(html).toMatch(/>needs authorization <a class="button" id="authorize-lin"/);
    expect(html).toContain("no inbound events (vars only)");
    expect(html).not.toContain("gh-secret-xyz");
    expect(html).not.toContain(doc.vars[0]!.value);
  });

  it("shows a schedule trigger's schedule and a connection trigger's connection, not a bare webhook URL", async () => {
    const { hook } = await setup();
    const manifest = [
      "version: v2",
      "project: {name: timed}",
      "connections:",
      "  - {name: gh, integration: github}",
      // Linear's connection sets vars only: no events reach its triggers here.
      "  - {name: lin, integration: linear}",
      "triggers:",
      '  - {name: nightly, schedule: "0 3 1 1 *", timezone: Europe/Paris, call: "handlers.py:on_post"}',
      '  - {name: often, schedule: "@every 1h", call: "handlers.py:on_post", is_durable: true}',
      '  - {name: prs, connection: gh, event_type: pull_request, call: "handlers.py:on_post"}',
      '  - {name: any_gh, connection: gh, call: "handlers.py:on_post"}',
      '  - {name: hook, type: webhook, event_type: put, call: "handlers.py:on_post"}',
      '  - {name: on_issue, connection: lin, event_type: issue, call: "handlers.py:on_post"}',
    ];
    const deployedAt = Date.now();
    const { doc, html } = await deployedPage(hook, "timed", manifest, FILES);
    const renderedAt = Date.now();
    expect(html).not.toContain(`${ORIGIN}/webhooks/"`);
    expect(html).toContain('<th scope="col">Starts on</th><th scope="col">Event</th>');
    // Per trigger, its row's cells after the name: starts on, event, kind.
    const cells = (name: string) =>
      new RegExp(`triggers/${name}">${name}</a></td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td>`)
        .exec(html)
        ?.slice(1);
    // A schedule's next firing, after the deploy, written as the UI writes times (UTC).
    const nextOf = (name: string) => /<time datetime="([^"]+)">/.exec(cells(name)?.[0] ?? "")?.[1];
    const nightlyNext = nextOf("nightly")!;
    expect(nightlyNext).toMatch(/^\d{4}-01-01T02:00:00\.000Z$/); // 03:00 in Paris, in winter
    expect(Date.parse(nightlyNext)).toBeGreaterThan(deployedAt);
    const nightlyTime = `<time datetime="${nightlyNext}">${nightlyNext.slice(0, 10)} 02:00:00 UTC</time>`;
    expect(cells("nightly")).toEqual([
      `schedule <span class="mono">0 3 1 1 * (Europe/Paris)</span>, next ${nightlyTime}`,
      "—",
      "schedule, not durable",
    ]);
    const apiTriggers = (await (
      await hook.app.request("/api/v1/triggers?project=timed")
    ).json()) as {
      triggers: { name: string; next_fire: string | null; active: boolean }[];
    };
    const api = Object.fromEntries(apiTriggers.triggers.map((t) => [t.name, t]));
    expect(api.nightly?.next_fire).toBe(nightlyNext);
    // `@every 1h`: the first whole hour (UTC, from the epoch) after the page was made.
    const oftenNext = Date.parse(nextOf("often")!);
    expect(oftenNext % 3_600_000).toBe(0);
    expect(oftenNext).toBeGreaterThan(deployedAt);
    expect(oftenNext).toBeLessThanOrEqual(renderedAt + 3_600_000);
    expect(cells("often")?.[0]).toMatch(
      /^schedule <span class="mono">@every 1h<\/span>, next <time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:00:00 UTC<\/time>$/,
    );
    expect(cells("often")?.slice(1)).toEqual(["—", "schedule, durable"]);
    expect(cells("prs")).toEqual([
      'connection <span class="mono">gh</span>',
      "pull_request",
      "connection, not durable",
    ]);
    expect(cells("any_gh")?.slice(0, 2)).toEqual([
      'connection <span class="mono">gh</span>',
      "any",
    ]);
    // A trigger of a connection that delivers no events never fires, as `cli trigger list` says.
    expect(cells("on_issue")).toEqual([
      'connection <span class="mono">lin</span>',
      "issue",
      "connection (inactive), not durable",
    ]);
    expect([api.on_issue?.active, api.prs?.active]).toEqual([false, true]);
    const webhookId = doc.triggers.find((t) => t.name === "hook")!.webhook_id;
    expect(cells("hook")?.[0]).toContain(`value="${ORIGIN}/webhooks/${webhookId}"`);
    expect(cells("hook")?.slice(1)).toEqual(["PUT", "async, not durable"]);

    // The trigger's page: its facts, and no test request form where there is no URL.
    const page = (name: string) => `/ui/projects/${doc.project.id}/triggers/${name}`;
    const nightly = await (await hook.app.request(page("nightly"))).text();
    expect(nightly).toContain('<dt>Schedule</dt><dd class="mono">0 3 1 1 * (Europe/Paris)</dd>');
    expect(nightly).toContain(`<dt>Next firing</dt><dd>${nightlyTime}</dd>`);
    expect(nightly).not.toContain("/webhooks/");
    expect(nightly).not.toContain('id="test"');
    expect(nightly).toContain("it starts on its schedule");
    const prs = await (await hook.app.request(page("prs"))).text();
    expect(prs).toContain('<dt>Connection</dt><dd class="mono">gh</dd>');
    expect(prs).toContain('<dt>Event type</dt><dd class="mono">pull_request</dd>');
    expect(prs).not.toContain('id="test"');
    expect(prs).toContain("the connection&#39;s inbound URL");
    expect(prs).toContain("<dt>Kind</dt><dd>connection, not durable</dd>");
    const onIssue = await (await hook.app.request(page("on_issue"))).text();
    expect(onIssue).toContain("<dt>Kind</dt><dd>connection (inactive), not durable</dd>");
    expect(onIssue).toContain("this one never fires");
    expect(onIssue).not.toContain('id="test"');
    const webhook = await hook.app.request(page("hook"));
    const cookie = cookieOf(webhook);
    const whtml = await webhook.text();
    expect(whtml).toContain(`value="${ORIGIN}/webhooks/${webhookId}"`);
    expect(whtml).toContain("<dt>Method</dt><dd>PUT</dd>");
    expect(whtml).toContain('<h2 id="test">Send a test request</h2>');

    // A test request posted to a schedule trigger anyway: a clear 409, nothing sent or stored.
    const fields = { method: "POST", suffix: "", headers: "", body: "{}", _csrf: csrfOf(whtml) };
    const refused = await hook.app.request(`${page("nightly")}/test`, form(fields, cookie));
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(
      "trigger &quot;nightly&quot; is a schedule trigger: it has no webhook URL to send a test request to",
    );
    expect(await hook.stores.events.list()).toEqual([]);

    // With no active deployment a schedule never fires (`-` in `cli trigger list`): it says so.
    const undeployed = { ...doc, project: { ...doc.project, active_deployment_id: null } };
    await hook.stores.storage.setItem(`projects:${doc.project.id}`, undeployed);
    const idle = await (await hook.app.request(`/ui/projects/${doc.project.id}`)).text();
    expect(idle).toContain('schedule <span class="mono">@every 1h</span>, not deployed</td>');
    const idleNightly = await (await hook.app.request(page("nightly"))).text();
    expect(idleNightly).toContain("<dt>Next firing</dt><dd>not deployed</dd>");
  });

  it("refuses state changes without the CSRF token or from another origin (dev mode too)", async () => {
    const { hook, send } = await setup();
    const id = await send("{}");
    const page = await hook.app.request(`/ui/sessions/${id}`);
    const cookie = cookieOf(page);
    const csrf = csrfOf(await page.text());
    const url = `/ui/sessions/${id}/rerun`;
    expect((await hook.app.request(url, form({}, cookie))).status).toBe(403);
    expect((await hook.app.request(url, form({ _csrf: "nope" }, cookie))).status).toBe(403);
    const evil = form({ _csrf: csrf }, cookie, "http://evil.example");
    expect((await hook.app.request(url, evil)).status).toBe(403);
    expect((await hook.app.request(url, form({ _csrf: csrf }, cookie, null))).status).toBe(403);
    // Another visitor's cookie does not fit this token.
    const other = cookieOf(await hook.app.request("/ui/sessions"));
    expect((await hook.app.request(url, form({ _csrf: csrf }, other))).status).toBe(403);
    // The trigger page's test request is a state change too.
    const doc = (await hook.stores.projects.byName("demo"))!;
    const test = `/ui/projects/${doc.project.id}/triggers/hook/test`;
    const fields = { method: "POST", suffix: "", headers: "", body: "{}", _csrf: "nope" };
    expect((await hook.app.request(test, form(fields, cookie))).status).toBe(403);
    const ok = await hook.app.request(url, form({ _csrf: csrf }, cookie));
    expect(ok.status).toBe(303);
    const newId = ok.headers.get("location")!.split("/").at(-1)!;
    expect(newId).toMatch(/^ses_/);
    expect(newId).not.toBe(id);
    const rerun = await hook.sessions.whenEnded(newId);
    expect(rerun?.event_id).toBe((await hook.stores.sessions.get(id))?.event_id);
  });

  it("needs sign-in outside dev mode; the cookie is HttpOnly and SameSite=Strict", async () => {
    const { hook, send } = await setup(TOKEN);
    const id = await send("{}");
    const anon = await hook.app.request(`/ui/sessions/${id}`);
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(
      `/ui/sign-in?next=${encodeURIComponent(`/ui/sessions/${id}`)}`,
    );
    expect((await hook.app.request("/ui/sessions/stream")).status).toBe(401);
    // The new pages too: the overview, its stream, settings, the bulk re-run, an authorize link.
    for (const page of [
      "/ui",
      "/ui/settings",
      "/ui/sessions/rerun-failed?project=demo&trigger=hook",
    ]) {
      const res = await hook.app.request(page);
      expect(res.status, page).toBe(303);
      expect(res.headers.get("location"), page).toMatch(/^\/ui\/sign-in\?next=/);
    }
    expect((await hook.app.request("/ui/overview/stream")).status).toBe(401);
    const bulk = await hook.app.request("/ui/sessions/rerun-failed?project=demo&trigger=hook", {
      method: "POST",
    });
    expect(bulk.status).toBe(401);
    const signIn = await hook.app.request("/ui/sign-in");
    expect(await signIn.text()).toContain('name="token"');
    const bad = await hook.app.request("/ui/sign-in", form({ token: "wrong" }, ""));
    expect(bad.status).toBe(401);
    expect(bad.headers.get("set-cookie")).toBeNull();
    const noOrigin = await hook.app.request("/ui/sign-in", form({ token: TOKEN }, "", null));
    expect(noOrigin.status).toBe(403);
    const good = await hook.app.request(
      "/ui/sign-in",
      form({ token: TOKEN, next: `/ui/sessions/${id}` }, ""),
    );
    expect(good.status).toBe(303);
    expect(good.headers.get("location")).toBe(`/ui/sessions/${id}`);
    const setCookie = good.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = cookieOf(good);
    const page = await hook.app.request(`/ui/sessions/${id}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("got {}");
    // A forged cookie does not pass.
    const forged = `${cookie.slice(0, -3)}abc`;
    expect((await hook.app.request("/ui/sessions", { headers: { cookie: forged } })).status).toBe(
      303,
    );
    const out = await hook.app.request("/ui/sign-out", form({ _csrf: csrfOf(html) }, cookie));
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
  });

  it("refuses an open redirect after sign-in", async () => {
    const { hook } = await setup(TOKEN);
    const res = await hook.app.request(
      "/ui/sign-in",
      form({ token: TOKEN, next: "https://evil.example/" }, ""),
    );
    expect(res.headers.get("location")).toBe("/ui");
  });

  it("re-runs over the API: a new session of the same event; 404 for an unknown one", async () => {
    const { hook, send, auth } = await setup(TOKEN);
    const id = await send('{"n":1}');
    const res = await hook.app.request(`/api/v1/sessions/${id}/rerun`, {
      method: "POST",
      headers: auth,
    });
    expect(res.status).toBe(201);
    const { session } = (await res.json()) as { session: { id: string; event_id: string } };
    expect(session.id).not.toBe(id);
    expect(session.event_id).toBe((await hook.stores.sessions.get(id))?.event_id);
    const missing = await hook.app.request("/api/v1/sessions/ses_nope/rerun", {
      method: "POST",
      headers: auth,
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("problem+json");
    const noToken = await hook.app.request(`/api/v1/sessions/${id}/rerun`, { method: "POST" });
    expect(noToken.status).toBe(401);
  });

  it("pages sessions newest first by cursor, filtered by state and trigger", async () => {
    const { hook, send } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(await send(i % 2 ? "fail" : "ok"));
    // The list reads the index, and unstorage's memory driver moves an entry in two writes:
    // every session's final write behind is done first.
    await Promise.all(ids.map((id) => hook.sessions.whenEnded(id)));
    const rowsOf = (html: string) => [...html.matchAll(/<tr id="row-(ses_\w+)"/g)].map((m) => m[1]);
    const nextOf = (html: string) =>
      /<a rel="next" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    const walk = async (first: string) => {
      const seen: string[] = [];
      let url: string | undefined = first;
      while (url) {
        const html = await (await hook.app.request(url)).text();
        const rows = rowsOf(html);
        expect(rows.length).toBeLessThanOrEqual(50);
        seen.push(...(rows as string[]));
        url = nextOf(html);
      }
      return seen;
    };
    expect(await walk("/ui/sessions")).toEqual([...ids].reverse());
    const errors = await walk("/ui/sessions?state=error");
    expect(errors).toEqual(ids.filter((_, i) => i % 2).reverse());
    const prj = (await hook.stores.projects.byName("demo"))!.project.id;
    expect(
      await walk(`/ui/sessions?project=${prj}&trigger=hook&state=completed`),
      "trigger hook's completed sessions",
    ).toHaveLength(60);
    expect(
      await walk(`/ui/sessions?project=${prj}&trigger=nope`),
      "no session of a trigger that does not exist",
    ).toEqual([]);
    const badCursor = await hook.app.request("/ui/sessions?cursor=123");
    expect(badCursor.status).toBe(400);
    const bad = await hook.app.request("/ui/sessions?state=sleepy");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("state must be one of");
    expect((await hook.app.request("/ui/")).status).toBe(303);
  });

  it("puts subscriptions and activities in one timeline, each journal step on the entry that logged it", async () => {
    const { hook, send } = await setup();
    const id = await send("{}", "durable");
    const html = await (await hook.app.request(`/ui/sessions/${id}`)).text();
    const kinds = [...html.matchAll(/<li[^>]* data-kind="(\w+)"/g)].map((m) => m[1]);
    // Steps are not listed a second time: each is named on its entry, with its waterfall bar.
    expect(kinds).toEqual(["state", "subscribe", "activity", "state"]);
    expect(html).toContain("data.method == &#39;POST&#39;");
    expect(html).toContain("&lt;b&gt;no&lt;/b&gt;");
    expect(html).toMatch(/<li data-kind="activity"[\s\S]*?data-step="1">[^<]*· step 1 \(live\)/);
    expect(html).toMatch(/<li data-kind="activity"[\s\S]*?<svg class="wf"/);
    expect(html).toMatch(/<time class="when" datetime="[^"]+">\d\d:\d\d:\d\d\.\d{3}<\/time>/);
  });

  it("streams an ended session's entries from `from`, escaped, then its end", async () => {
    const { hook, send } = await setup();
    const id = await send("<i>x</i>");
    const res = await hook.app.request(`/ui/sessions/${id}/stream?from=1`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = (await res.text()).split("\n\n").filter((b) => b.startsWith("event:"));
    expect(
      events.map((b) => b.split("\n")[0]),
      "the entries from entry 1 on, then the end",
    ).toEqual(["event: entry", "event: entry", "event: end"]);
    expect(events[0]).toContain("got &lt;i&gt;x&lt;/i&gt;");
    expect(events[0]).not.toContain("<i>x");
    expect(events[2]).toContain("Session ended: completed");
    expect((await hook.app.request(`/ui/sessions/${id}/stream?from=-1`)).status).toBe(400);
    expect((await hook.app.request("/ui/sessions/ses_none/stream")).status).toBe(404);
  });

  it("lists sessions stored before its index existed, once, oldest last", async () => {
    const storage = createStorage({ driver: memory() });
    const stores = createStores(storage);
    for (const n of [3, 1, 2]) {
      await stores.sessions.put(sessionRecord({ id: `ses_old${n}`, project_id: `prj_${n % 2}` }));
    }
    const make = () =>
      composeApp({
        services: {
          storage,
          runtime: fakeRuntime().runtime,
          secrets: createSecretBox(randomBytes(32)),
        },
      });
    const rows = async (hook: ReturnType<typeof composeApp>) =>
      [...(await (await hook.app.request("/ui/sessions")).text()).matchAll(/id="row-(\w+)"/g)].map(
        (m) => m[1],
      );
    expect(await rows(make())).toEqual(["ses_old3", "ses_old2", "ses_old1"]);
    expect(await rows(make())).toEqual(["ses_old3", "ses_old2", "ses_old1"]); // not twice
  });
});
