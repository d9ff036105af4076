import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionProject } from "./support/connection-project.ts";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * A confluence connection through the real service and real Python, against a stand-in
 * Confluence site on loopback: once the connection has its site and API token, the service
 * registers AutoKitteh's nine webhooks (one a category, each with its secret) to its inbound
 * URL under SVC_PUBLIC_URL; a delivery signed as Atlassian signs one (X-Hub-Signature) starts
 * the trigger of its event type with AutoKitteh's data; a wrong or missing signature stores
 * and starts nothing; the webhooks are deleted at the site once the connection is removed.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-confluence");
const PUBLIC = "https://hooks.example.test";
const EMAIL = "bot@example.com";
const TOKEN = "confluence-api-token";
const REST = "/wiki/rest/webhooks/1.0/webhook";

interface Hook {
  id: number;
  name: string;
  url: string;
  events: string[];
  secret: string;
}

/** Confluence's webhook REST resource: list, register (201 with `self`), delete; Basic auth only. */
function standInConfluence() {
  const site = { url: "", hooks: [] as Hook[], calls: [] as string[], server: null as unknown };
  let next = 100;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      site.calls.push(`${req.method} ${path}`);
      const basic = `Basic ${Buffer.from(`${EMAIL}:${TOKEN}`).toString("base64")}`;
      const send = (status: number, body?: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(body === undefined ? "" : JSON.stringify(body));
      };
      if (req.headers.authorization !== basic) return send(401, { message: "Unauthorized" });
      const self = (h: Hook) => `${site.url}${REST}/${h.id}`;
      if (req.method === "GET" && path === REST) {
        return send(
          200,
          site.hooks.map((h) => ({ ...h, self: self(h) })),
        );
      }
      if (req.method === "POST" && path === REST) {
        const hook = { id: next++, ...JSON.parse(Buffer.concat(chunks).toString("utf8")) };
        site.hooks.push(hook);
        return send(201, { ...hook, self: self(hook), enabled: true });
      }
      const id = Number(/\/(\d+)$/.exec(path)?.[1]);
      if (req.method === "DELETE" && site.hooks.some((h) => h.id === id)) {
        site.hooks = site.hooks.filter((h) => h.id !== id);
        return send(204);
      }
      send(404, { message: "not found" });
    });
  });
  site.server = server;
  return { site, server };
}

const signed = (secret: string, payload: unknown, signature?: string): RequestInit => {
  const body = JSON.stringify(payload);
  const mac = createHmac("sha256", secret).update(body).digest("hex");
  return {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "x-hub-signature": signature ?? `sha256=${mac}`,
      "x-atlassian-webhook-identifier": crypto.randomUUID(),
    },
  };
};

const page = {
  timestamp: 1764979200000,
  userAccountId: "5b10ac8d82e05b22cc7d4ef5",
  page: {
    id: 98765,
    title: "Runbook",
    spaceKey: "OPS",
    self: "https://example.atlassian.net/wiki/spaces/OPS/pages/98765",
  },
};

describe("connections: Confluence events", () => {
  const { site, server } = standInConfluence();
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const emu = useEmulator({ publicUrl: PUBLIC });
  const project = connectionProject(emu, "confluence_events", FIXTURE);
  const { deploy, counts } = project;
  let inbound = "";
  let path = "";
  const vars = () => project.vars("wiki");
  const setVar = (name: string, value: string, secret = false) =>
    project.setVar("wiki", name, value, secret);
  const secretOf = (category: string) =>
    site.hooks.find((h) => h.url === `${inbound}/${category}`)!.secret;

  it("registers AutoKitteh's nine webhooks at the site once the site and token are set", async () => {
    path = (await deploy()).connections[0]!.inbound_path;
    inbound = PUBLIC + path;
    expect(site.calls).toEqual([]);
    await setVar("BaseURL", site.url);
    await setVar("Email", EMAIL);
    await setVar("Token", TOKEN, true);
    const saved = await until("the webhooks' vars", async () => {
      const v = await vars();
      return v.WebhookID_updated ? v : undefined;
    });
    expect(site.hooks.map((h) => h.url.slice(inbound.length)).sort()).toEqual(
      [
        "added",
        "archived",
        "copied",
        "created",
        "deleted",
        "moved",
        "removed",
        "trashed",
        "updated",
      ]
        .map((c) => `/${c}`)
        .sort(),
    );
    const created = site.hooks.find((h) => h.url.endsWith("/created"))!;
    expect(created.events).toEqual(expect.arrayContaining(["page_created", "comment_created"]));
    expect(created.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(site.hooks.map((h) => h.secret)).size).toBe(9);
    expect(saved.WebhookID_created).toBe(String(created.id));
    expect(saved.WebhookSecret_created).toBe("********");
  });

  it("starts the trigger of the event's type with AutoKitteh's data for a signed delivery", async () => {
    const res = await fetch(`${emu.url}${path}/created`, signed(secretOf("created"), page));
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    expect(session_ids).toHaveLength(1);
    expect((await emu.ended(session_ids[0]!)).state).toBe("completed");
    expect(await emu.prints(session_ids[0]!)).toEqual([
      "page_created: Runbook (98765) in OPS by 5b10ac8d82e05b22cc7d4ef5",
    ]);
    // The trigger's filter reads AutoKitteh's data: a page of another space is stored, starts nothing.
    const other = { ...page, page: { ...page.page, spaceKey: "HR" } };
    const skipped = await fetch(`${emu.url}${path}/created`, signed(secretOf("created"), other));
    expect(((await skipped.json()) as { session_ids: string[] }).session_ids).toEqual([]);
    const comment = { comment: { id: 5, parent: { title: "Runbook" } }, timestamp: 1 };
    const again = await fetch(`${emu.url}${path}/created`, signed(secretOf("created"), comment));
    const ids = ((await again.json()) as { session_ids: string[] }).session_ids;
    expect((await emu.ended(ids[0]!)).state).toBe("completed");
    expect(await emu.prints(ids[0]!)).toEqual(["comment_created: on Runbook"]);
  });

  it("refuses a wrong, missing or another category's signature: nothing stored, nothing started", async () => {
    const cases: [string, RequestInit, number, string][] = [
      ["/created", signed("forged", page), 401, "X-Hub-Signature does not match the body"],
      ["/created", signed(secretOf("updated"), page), 401, "does not match"],
      [
        "/created",
        { ...signed("x", page), headers: { "content-type": "application/json" } },
        401,
        "X-Hub-Signature is missing",
      ],
      ["/bogus", signed(secretOf("created"), page), 400, "no Confluence webhook category"],
    ];
    for (const [suffix, init, status, detail] of cases) {
      const before = await counts();
      const res = await fetch(emu.url + path + suffix, init);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
      expect(await counts()).toEqual(before);
    }
  });

  it("deletes the webhooks at the site once the connection is removed by a redeploy", async () => {
    const ids = site.hooks.map((h) => h.id);
    await deploy("version: v1\nproject:\n  name: confluence_events\n");
    await until("the webhooks deleted", async () => site.hooks.length === 0);
    const deletes = site.calls.filter((c) => c.startsWith("DELETE"));
    expect(deletes.sort()).toEqual(ids.map((id) => `DELETE ${REST}/${id}`).sort());
    await until("the vars cleared", async () => (await vars()).WebhookID_created === undefined);
    expect(Object.keys(await vars()).filter((n) => n.startsWith("Webhook"))).toEqual([]);
  });
});
