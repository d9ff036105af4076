import { type KeyObject, randomBytes, verify } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the stand-in GitHub received, and what it decided. */
export interface GithubCall {
  method: string;
  path: string;
  authorization: string;
  /** 200/201 when the credential held, else the refusal's status. */
  status: number;
  /** The JWT's claims, for the App endpoints. */
  claims?: Record<string, unknown>;
}

export interface GithubAppApi {
  url: string;
  calls: GithubCall[];
  /**
   * The App's setup URL, as its settings at GitHub hold it: where the install page
   * (`/apps/hookline-test/installations/new`, github.com's web side) sends the browser back.
   */
  setupUrl: string;
  close(): Promise<void>;
}

/** Why a JWT does not authenticate App `appId` under `key`, or null when it does (GitHub's rules). */
function jwtProblem(jwt: string, key: KeyObject, appId: number): string | null {
  const [h = "", p = "", s = ""] = jwt.split(".");
  const good = verify("sha256", Buffer.from(`${h}.${p}`), key, Buffer.from(s, "base64url"));
  const header = partOf(h);
  const claims = partOf(p);
  if (!good || header?.alg !== "RS256" || !claims) return "A JSON web token could not be decoded";
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp } = claims as { iat: number; exp: number };
  if (String(claims.iss) !== String(appId)) return "Integration not found";
  if (!Number.isInteger(iat) || iat > now + 5) return "'Issued at' claim is bad";
  if (!Number.isInteger(exp) || exp <= now || exp - iat > 660) {
    return "'Expiration time' claim ('exp') is too far in the future";
  }
  return null;
}

/** A JWT part's JSON, or undefined. */
function partOf(part: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

const claimsOf = (jwt: string) => partOf(jwt.split(".")[1] ?? "");

/** The App's name (its slug) at the stand-in. */
export const SLUG = "hookline-test";

/**
 * GitHub's App endpoints on loopback: `GET /app/installations/{id}` and `POST
 * /app/installations/{id}/access_tokens` take only an RS256 JWT that App `appId`'s public key
 * verifies (iss the App id, iat and exp sane); the access token handed out is then the only
 * credential `GET /repos/{owner}/{repo}` takes. It plays github.com's install page too
 * (`GET /apps/<SLUG>/installations/new?state=…` sends the browser to `setupUrl` with the
 * installation). Every request is recorded.
 * @example const gh = await githubAppApi(publicKey, 4242, 77);
 */
export async function githubAppApi(
  publicKey: KeyObject,
  appId: number,
  installationId: number,
): Promise<GithubAppApi> {
  const calls: GithubCall[] = [];
  const tokens = new Set<string>();
  const app = `/app/installations/${installationId}`;
  const answer = (
    method: string,
    path: string,
    auth: string,
  ): [number, unknown, Record<string, unknown>?] => {
    if (path === app || path === `${app}/access_tokens`) {
      const jwt = auth.replace(/^Bearer /, "");
      const problem = jwtProblem(jwt, publicKey, appId);
      if (problem) return [401, { message: problem }];
      if (method === "GET") {
        const account = { login: "octo", id: 9, type: "Organization" };
        return [200, { id: installationId, app_id: appId, app_slug: SLUG, account }];
      }
      const token = `ghs_${randomBytes(12).toString("hex")}`;
      tokens.add(token);
      const expires_at = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
      return [201, { token, expires_at }, claimsOf(jwt)];
    }
    const repo = /^\/repos\/([^/]+)\/([^/]+)$/.exec(path);
    if (method === "GET" && repo) {
      if (!tokens.has(auth.replace(/^token /, ""))) return [401, { message: "Bad credentials" }];
      return [200, { id: 1, name: repo[2], full_name: `${repo[1]}/${repo[2]}` }];
    }
    return [404, { message: "Not Found" }];
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const method = req.method ?? "GET";
      const url = new URL(req.url ?? "/", "http://x");
      const path = url.pathname;
      const authorization = req.headers.authorization ?? "";
      if (method === "GET" && path === `/apps/${SLUG}/installations/new`) {
        // The user picks an account and installs; GitHub sends the browser to the setup URL.
        const back = new URL(api.setupUrl);
        back.searchParams.set("installation_id", String(installationId));
        back.searchParams.set("setup_action", "install");
        back.searchParams.set("state", url.searchParams.get("state") ?? "");
        calls.push({ method, path, authorization, status: 302 });
        res.writeHead(302, { location: back.toString() });
        return void res.end();
      }
      const [status, body, claims] = answer(method, path, authorization);
      calls.push({ method, path, authorization, status, ...(claims ? { claims } : {}) });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const api: GithubAppApi = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    setupUrl: "http://127.0.0.1:9/oauth/redirect/github",
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return api;
}
