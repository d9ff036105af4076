import type { WebhookData } from "../model/records.ts";

/**
 * Header names as sent → canonical: a sender's are the same few each time (past the bound, a
 * name is made each time).
 */
const CANONICAL = new Map<string, string>();
const CANONICAL_MAX = 512;

/** `content-type` → `Content-Type`, `x-hub-signature-256` → `X-Hub-Signature-256`. */
export function canonicalHeader(name: string): string {
  const known = CANONICAL.get(name);
  if (known !== undefined) return known;
  const made = name
    .toLowerCase()
    .split("-")
    .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : part))
    .join("-");
  if (CANONICAL.size < CANONICAL_MAX) CANONICAL.set(name, made);
  return made;
}

/** Joins repeated names with ", " as HTTP does. */
function joinRepeats(pairs: Iterable<[string, string]>, key = (k: string) => k) {
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) {
    const name = key(k);
    out[name] = name in out ? `${out[name]}, ${v}` : v;
  }
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeText(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function mediaType(headers: Record<string, string>): string {
  return (headers["Content-Type"] ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * The body as JSON whenever it is JSON text, whatever the Content-Type says: `curl -d` labels
 * JSON as a form, and handlers should not have to care.
 */
function parseJson(text: string | null): unknown {
  if (text === null || text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The part of the path below `<prefix>/`, without a leading slash, as AutoKitteh gives it: so
 * projects written for it (`path_suffix == "new"`) run unchanged. Only the one separating slash
 * goes: a trailing slash (`a/`) or a doubled one (`//x` → `/x`) stays as sent.
 * @example pathSuffix("/webhooks/abc/game/7", "/webhooks/abc") // "game/7"
 */
function pathSuffix(path: string, prefix: string): string {
  const rest = path.slice(prefix.length);
  return rest.startsWith("/") ? rest.slice(1) : rest;
}

/**
 * The event `data` of one webhook request, built once per request (CONTRACT: Webhook endpoint).
 * @example buildWebhookData({ method: "POST", url: new URL("http://h/webhooks/a/b?x=1"),
 *   headers: new Headers(), body: new Uint8Array(), webhookPrefix: "/webhooks/a" })
 */
export function buildWebhookData(req: {
  method: string;
  url: URL;
  /** `Headers`, or its pairs as `requestHeaders` reads them: repeats are joined with ", ". */
  headers: Iterable<[string, string]>;
  body: Uint8Array;
  webhookPrefix: string;
}): WebhookData {
  const headers = joinRepeats(req.headers, canonicalHeader);
  const text = decodeText(req.body);
  const type = mediaType(headers);
  const path = req.url.pathname;
  return {
    method: req.method.toUpperCase(),
    raw_url: path + req.url.search,
    url: {
      path,
      query: joinRepeats(req.url.searchParams.entries()),
      path_suffix: pathSuffix(path, req.webhookPrefix),
    },
    headers,
    body: {
      bytes: Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength).toString(
        "base64",
      ),
      text,
      json: parseJson(text),
      form:
        type === "application/x-www-form-urlencoded" && text !== null
          ? joinRepeats(new URLSearchParams(text).entries())
          : null,
    },
  };
}
