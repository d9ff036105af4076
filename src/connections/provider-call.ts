/** One call to a provider's API waits this long at most. */
const CALL_TIMEOUT_MS = 10_000;

/** What a provider's API answered: its status, its body, and that body as JSON (undefined when not JSON). */
export interface ProviderAnswer {
  status: number;
  text: string;
  json: unknown;
}

/**
 * One JSON call to a provider's API (Jira, Confluence, Google, Telegram, …), bounded in time:
 * `authorization` as given, a JSON body when there is one. It never throws on a status; the
 * caller reads it (a network failure or the timeout does throw).
 * @example const a = await providerCall(fetch, "https://api.example/v1/x", { method: "POST", authorization: `Bearer ${t}`, body: { a: 1 } });
 */
export async function providerCall(
  fetchFn: typeof fetch,
  url: string,
  opts: { method: string; authorization?: string; body?: unknown },
): Promise<ProviderAnswer> {
  const { method, authorization, body } = opts;
  const res = await fetchFn(url, {
    method,
    headers: {
      ...(authorization && { authorization }),
      accept: "application/json",
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}
