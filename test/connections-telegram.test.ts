import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionProject } from "./support/connection-project.ts";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

/**
 * A telegram connection through the real service and real Python, against a stand-in Bot API
 * on loopback (the connection's `base_url`): once the bot's token is set, the service calls
 * `setWebhook` with its inbound URL under SVC_PUBLIC_URL and a random `secret_token`; an update
 * carrying that token in `X-Telegram-Bot-Api-Secret-Token` starts the trigger of AutoKitteh's
 * event type for it; a wrong or missing token stores and starts nothing; `deleteWebhook` once
 * the connection is removed.
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "connections-telegram");
const PUBLIC = "https://hooks.example.test";
const TOKEN = "4242:AAbot-token";

/** The Bot API's getMe, setWebhook and deleteWebhook for one bot, every call recorded. */
function standInTelegram() {
  const api = { url: "", calls: [] as { method: string; body: Record<string, string> }[] };
  const hook = { url: "", secret: "" };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const [, bot, method] = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? "") ?? [];
      const text = Buffer.concat(chunks).toString("utf8");
      const body = text ? JSON.parse(text) : {};
      api.calls.push({ method: method ?? req.url ?? "", body });
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      };
      if (bot !== TOKEN) return send(401, { ok: false, description: "Unauthorized" });
      if (method === "getMe") return send(200, { ok: true, result: { id: 4242, is_bot: true } });
      if (method === "setWebhook") {
        Object.assign(hook, { url: body.url, secret: body.secret_token });
        return send(200, { ok: true, result: true, description: "Webhook was set" });
      }
      if (method === "deleteWebhook") {
        Object.assign(hook, { url: "", secret: "" });
        return send(200, { ok: true, result: true, description: "Webhook was deleted" });
      }
      send(404, { ok: false, description: "Not Found" });
    });
  });
  return { api, hook, server };
}

const update = {
  update_id: 731,
  message: {
    message_id: 12,
    from: { id: 99, is_bot: false, username: "alice" },
    chat: { id: -1001, type: "group" },
    text: "hello bot",
  },
};

const post = (payload: unknown, secret: string | null): RequestInit => ({
  method: "POST",
  body: JSON.stringify(payload),
  headers: {
    "content-type": "application/json",
    ...(secret !== null && { "x-telegram-bot-api-secret-token": secret }),
  },
});

describe("connections: Telegram updates", () => {
  const { api, hook, server } = standInTelegram();
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const emu = useEmulator({ publicUrl: PUBLIC });
  const project = connectionProject(emu, "telegram_events", FIXTURE);
  const { deploy, counts } = project;
  let path = "";
  const vars = () => project.vars("bot");
  const setVar = (name: string, value: string, secret = false) =>
    project.setVar("bot", name, value, secret);

  it("sets the bot's webhook to the public inbound URL with a random secret token", async () => {
    path = (await deploy()).connections[0]!.inbound_path;
    await setVar("base_url", api.url);
    expect(api.calls).toEqual([]);
    await setVar("BotToken", TOKEN, true);
    const saved = await until("the webhook's vars", async () => {
      const v = await vars();
      return v.SecretToken ? v : undefined;
    });
    expect(hook.url).toBe(PUBLIC + path);
    expect(hook.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(saved).toMatchObject({
      SecretToken: "********",
      WebhookURL: PUBLIC + path,
      BotID: "4242",
    });
    expect(api.calls.map((c) => c.method)).toEqual(["getMe", "setWebhook"]);
  });

  it("starts the trigger of AutoKitteh's event type for an update with the secret token", async () => {
    const res = await fetch(emu.url + path, post(update, hook.secret));
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    expect(session_ids).toHaveLength(1);
    expect((await emu.ended(session_ids[0]!)).state).toBe("completed");
    expect(await emu.prints(session_ids[0]!)).toEqual([
      "message 731: 'hello bot' from alice in -1001",
    ]);
    const callback = { update_id: 732, callback_query: { id: "7", data: "vote:yes" } };
    const again = await fetch(emu.url + path, post(callback, hook.secret));
    const ids = ((await again.json()) as { session_ids: string[] }).session_ids;
    expect((await emu.ended(ids[0]!)).state).toBe("completed");
    expect(await emu.prints(ids[0]!)).toEqual(["callback_query: vote:yes"]);
    // Telegram retries an update with its update_id: one event.
    const before = await counts();
    const retried = await fetch(emu.url + path, post(update, hook.secret));
    expect(retried.status).toBe(202);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(await counts()).toEqual(before);
  });

  it("refuses a missing or wrong secret token: problem+json, nothing stored, nothing started", async () => {
    const cases: [RequestInit, number, string][] = [
      [
        post({ ...update, update_id: 800 }, null),
        401,
        "X-Telegram-Bot-Api-Secret-Token is missing",
      ],
      [post({ ...update, update_id: 801 }, "guessed"), 401, "does not match"],
      [post({ ...update, update_id: 802 }, `${hook.secret}x`), 401, "does not match"],
    ];
    for (const [init, status, detail] of cases) {
      const before = await counts();
      const res = await fetch(emu.url + path, init);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain(detail);
      expect(await counts()).toEqual(before);
    }
  });

  it("calls deleteWebhook once the connection is removed by a redeploy", async () => {
    await deploy("version: v1\nproject:\n  name: telegram_events\n");
    await until("the webhook deleted", async () => hook.url === "");
    expect(api.calls.map((c) => c.method)).toEqual(["getMe", "setWebhook", "deleteWebhook"]);
    await until("the vars cleared", async () => (await vars()).SecretToken === undefined);
    expect((await vars()).WebhookURL).toBeUndefined();
  });
});
