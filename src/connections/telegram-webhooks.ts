import { randomBytes } from "node:crypto";
import type { HookInput, HookResult } from "./confluence-webhooks.ts";
import { providerCall } from "./provider-call.ts";
import { isObject } from "./verdict.ts";

/** The vars a webhook set for a bot leaves (AutoKitteh's names), cleared once it is deleted. */
export const TELEGRAM_HOOK_VARS = ["SecretToken", "WebhookURL", "BotID"];

/**
 * The Bot API's base URL: the connection's `base_url` (as its client's), else
 * `SVC_TELEGRAM_API_URL`, else `https://api.telegram.org`; without a trailing slash.
 * @example telegramApiUrl(() => undefined, {}) // "https://api.telegram.org"
 */
export function telegramApiUrl(
  vars: HookInput["vars"],
  env: Record<string, string | undefined> = process.env,
): string {
  const url = vars("base_url") ?? (env.SVC_TELEGRAM_API_URL || "https://api.telegram.org");
  return url.replace(/\/+$/, "");
}

/** One Bot API method with the bot's token: its `result`, or throws with Telegram's words. */
async function botCall(input: HookInput, token: string, method: string, body?: unknown) {
  const url = `${telegramApiUrl(input.vars)}/bot${token}/${method}`;
  const answer = await providerCall(input.fetch ?? fetch, url, {
    method: "POST",
    body: body ?? {},
  });
  const { status, json } = answer;
  if (status < 200 || status >= 300 || !isObject(json) || json.ok !== true) {
    const said = isObject(json) && typeof json.description === "string" ? json.description : "";
    throw new Error(
      `${method}: Telegram answered ${status}${said ? `: ${said.slice(0, 200)}` : ""}`,
    );
  }
  return json.result;
}

/** The bot's id: the part of its token before the colon. */
const botIdOf = (token: string) => token.split(":")[0] ?? "";

/**
 * Sets the bot's webhook to the connection's inbound URL with a new random `secret_token`
 * (`setWebhook`), unless it is set already for this URL and this bot (`WebhookURL`,
 * `BotID`, `SecretToken`). Saves nothing: `set` holds `SecretToken` (sealed), `WebhookURL`
 * and `BotID` (from `getMe`). Never throws.
 * @example await ensureTelegramWebhook({ vars, inboundUrl }) // { action: "registered", … }
 */
export async function ensureTelegramWebhook(input: HookInput): Promise<HookResult> {
  const { vars, inboundUrl } = input;
  const token = vars("BotToken");
  const none: HookResult = { action: "skipped", detail: "no BotToken", set: {}, secret: [] };
  if (!token) return none;
  const same =
    vars("SecretToken") && vars("WebhookURL") === inboundUrl && vars("BotID") === botIdOf(token);
  if (same) return { ...none, action: "kept", detail: "webhook set" };
  try {
    const me = await botCall(input, token, "getMe");
    const botId = isObject(me) && me.id !== undefined ? String(me.id) : botIdOf(token);
    const secret = randomBytes(32).toString("hex");
    await botCall(input, token, "setWebhook", { url: inboundUrl, secret_token: secret });
    const set = { SecretToken: secret, WebhookURL: inboundUrl, BotID: botId };
    return {
      action: "registered",
      detail: `webhook of bot ${botId} set`,
      set,
      secret: ["SecretToken"],
    };
  } catch (e) {
    return { ...none, action: "failed", detail: (e as Error).message };
  }
}

/**
 * Deletes the bot's webhook (`deleteWebhook`), for a connection that is gone: null once done,
 * else the problem. Never throws.
 * @example await deleteTelegramWebhook({ vars, inboundUrl: "" }) // null
 */
export async function deleteTelegramWebhook(input: HookInput): Promise<string | null> {
  const token = input.vars("BotToken");
  if (!token) return "no BotToken to delete it with";
  try {
    await botCall(input, token, "deleteWebhook");
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}
