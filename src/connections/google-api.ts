import { providerCall } from "./provider-call.ts";
import { isObject } from "./verdict.ts";

/** Pages of a list read at most in one go (a sync that long starts over next time). */
const MAX_PAGES = 20;

/**
 * The Google API root a connection's calls go to: its `base_url` var (as the Python clients'
 * `<connection>__base_url`), else `SVC_GOOGLE_API_URL`, else `https://www.googleapis.com`. A
 * Calendar or Drive `base_url` that ends with the API's own path, as googleapiclient's
 * `api_endpoint` takes it (`…/calendar/v3/`), stands for the root before that path.
 * @example googleApiUrl("http://127.0.0.1:9000/calendar/v3/", {}) // "http://127.0.0.1:9000"
 */
export function googleApiUrl(
  baseUrl: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string {
  const url = baseUrl || env.SVC_GOOGLE_API_URL || "https://www.googleapis.com";
  return url.replace(/\/+$/, "").replace(/\/(calendar|drive)\/v3$/, "");
}

/** Who calls Google: the API root, the OAuth access token, and the fetch to call with. */
export interface GoogleCaller {
  api: string;
  token: string;
  fetch: typeof fetch;
}

/** What a Google call answered: its status and JSON (an empty object when not JSON). */
export interface GoogleAnswer {
  status: number;
  json: Record<string, unknown>;
}

/**
 * One call to a Google REST API with the connection's token, JSON both ways, within 10 s.
 * `path` is under the API root (`/calendar/v3/…`). A network failure or time-out throws.
 * @example await googleCall(caller, "GET", "/drive/v3/changes/startPageToken")
 */
export async function googleCall(
  caller: GoogleCaller,
  method: string,
  path: string,
  body?: unknown,
): Promise<GoogleAnswer> {
  const authorization = `Bearer ${caller.token}`;
  const answer = await providerCall(caller.fetch, caller.api + path, {
    method,
    authorization,
    body,
  });
  return { status: answer.status, json: isObject(answer.json) ? answer.json : {} };
}

/**
 * An answer that is not a success, in words for the log (Google's `error.message`, cut
 * short), or null for a 2xx.
 * @example googleProblem({ status: 401, json: { error: { message: "Invalid Credentials" } } })
 */
export function googleProblem(answer: GoogleAnswer): string | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  const error = isObject(answer.json.error) ? answer.json.error : {};
  const said = typeof error.message === "string" ? `: ${error.message.slice(0, 200)}` : "";
  const hint =
    answer.status === 401 ? " (the OAuth token was refused: refresh it, or authorize again)" : "";
  return `Google answered ${answer.status}${said}${hint}`;
}

/** A list's items read page by page, and the token the next read starts from. */
export interface GoogleList {
  items: Record<string, unknown>[];
  /** Calendar's `nextSyncToken`, Drive's `newStartPageToken`, Gmail's `historyId`; "" when none. */
  next: string;
  /** Google said the token is no longer valid (410; Gmail's 404): a full sync must start over. */
  gone?: boolean;
}

/**
 * Reads every page of a list (`items` of Calendar's events, `changes` of Drive's), following
 * `nextPageToken`, up to the token of the next read. Throws a problem in words.
 * @example await readPages(caller, (page) => `/drive/v3/changes?pageToken=${page ?? start}`, "changes", "newStartPageToken")
 */
export async function readPages(
  caller: GoogleCaller,
  pathOf: (pageToken: string | undefined) => string,
  field: "items" | "changes" | "history",
  nextField: "nextSyncToken" | "newStartPageToken" | "historyId",
): Promise<GoogleList> {
  const items: Record<string, unknown>[] = [];
  let page: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const answer = await googleCall(caller, "GET", pathOf(page));
    if (answer.status === 410 || (field === "history" && answer.status === 404))
      return { items: [], next: "", gone: true };
    const problem = googleProblem(answer);
    if (problem) throw new Error(problem);
    const got = answer.json[field];
    if (Array.isArray(got)) items.push(...got.filter(isObject));
    const more = answer.json.nextPageToken;
    if (typeof more !== "string" || more === "") {
      const next = answer.json[nextField];
      return {
        items,
        next: typeof next === "string" || typeof next === "number" ? String(next) : "",
      };
    }
    page = more;
  }
  throw new Error(`more than ${MAX_PAGES} pages of ${field}`);
}
