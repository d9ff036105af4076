import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { resolveDirs, serviceUrl } from "../config.ts";
import { CliError } from "./io.ts";

/** A client of the management API under `/api/v1`. */
export interface Client {
  readonly baseUrl: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** Read a `text/event-stream`; resolves when `onEvent` returns `"stop"` or the stream ends. */
  events(path: string, onEvent: (event: string, data: string) => "stop" | undefined): Promise<void>;
}

/** An error answer of the API; `message` is the problem's `detail`. */
export class ApiError extends CliError {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.name = "ApiError";
    this.status = status;
  }
}

/**
 * The API token: `SVC_API_TOKEN`, else `<configHome>/token` if it exists.
 * @example readToken({ SVC_API_TOKEN: "t" }) // "t"
 */
export function readToken(env: NodeJS.ProcessEnv): string | undefined {
  if (env.SVC_API_TOKEN) return env.SVC_API_TOKEN;
  const file = join(resolveDirs(env).configHome, "token");
  if (!existsSync(file)) return undefined;
  return readFileSync(file, "utf8").trim() || undefined;
}

/**
 * The client for `SVC_URL` with the token from {@link readToken}.
 * @example await clientFromEnv(process.env).get("/api/v1/envs")
 */
export function clientFromEnv(env: NodeJS.ProcessEnv): Client {
  return createClient(serviceUrl(env), readToken(env));
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"]);

/**
 * A client on node:http: unlike `fetch` it has no 5-minute header timeout, which a first deploy
 * (building the Python environment) can outlast.
 * @example await createClient("http://127.0.0.1:9980").get("/api/v1/projects")
 */
export function createClient(baseUrl: string, token?: string): Client {
  const base = baseUrl.replace(/\/+$/, "");
  const unreachable = (e: NodeJS.ErrnoException) => {
    const why =
      e.code === "ECONNREFUSED"
        ? "is it running? (start it with: npx cli up --mode dev)"
        : `${e.code ?? e.message}`;
    return new CliError(`cannot reach the service at ${base}: ${why}`);
  };

  function open(method: string, path: string, body: unknown, accept: string) {
    const url = new URL(base + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept };
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }
    const lib = url.protocol === "https:" ? https : http;
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = lib.request(url, { method, headers }, resolve);
      req.on("error", (e: NodeJS.ErrnoException) =>
        reject(e.code && NETWORK_CODES.has(e.code) ? unreachable(e) : new CliError(e.message)),
      );
      req.end(payload);
    });
  }

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await open(method, path, body, "application/json");
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status >= 400) throw problem(status, res, text);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`the service answered ${method} ${path} with something other than JSON`);
    }
  }

  async function events(
    path: string,
    onEvent: (event: string, data: string) => "stop" | undefined,
  ): Promise<void> {
    const res = await open("GET", path, undefined, "text/event-stream");
    const status = res.statusCode ?? 0;
    if (status >= 400) throw problem(status, res, await readBody(res));
    res.setEncoding("utf8");
    const parser = sseParser(onEvent);
    for await (const chunk of res) {
      if (parser.push(chunk as string) === "stop") {
        res.destroy();
        return;
      }
    }
  }

  return {
    baseUrl: base,
    get: (path) => request("GET", path),
    post: (path, body) => request("POST", path, body ?? {}),
    put: (path, body) => request("PUT", path, body ?? {}),
    delete: (path) => request("DELETE", path),
    events,
  };
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function problem(status: number, res: http.IncomingMessage, text: string): ApiError {
  if (/json/i.test(res.headers["content-type"] ?? "")) {
    try {
      const body = JSON.parse(text) as { detail?: unknown; title?: unknown };
      if (typeof body.detail === "string" && body.detail) return new ApiError(status, body.detail);
      if (typeof body.title === "string" && body.title) return new ApiError(status, body.title);
    } catch {
      // not JSON after all: fall through to the status line
    }
  }
  return new ApiError(status, `the service answered ${status} ${res.statusMessage ?? ""}`.trim());
}

/**
 * Server-sent events, fed in arbitrary chunks. Each event is dispatched at its blank line with its
 * name (`message` when none) and its `data:` lines joined by newlines.
 * @example sseParser((e, d) => void console.log(e, d)).push("event: end\ndata: {}\n\n")
 */
export function sseParser(onEvent: (event: string, data: string) => "stop" | undefined) {
  let buffer = "";
  let event = "";
  let data: string[] = [];
  return {
    push(chunk: string): "stop" | undefined {
      buffer += chunk;
      for (let nl = buffer.search(/\r?\n/); nl >= 0; nl = buffer.search(/\r?\n/)) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(buffer[nl] === "\r" ? nl + 2 : nl + 1);
        if (line === "") {
          if (data.length > 0 && onEvent(event || "message", data.join("\n")) === "stop") {
            return "stop";
          }
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      return undefined;
    },
  };
}
