import { createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One call the stand-in took: method, path with query, JSON body, and whether the token was right. */
export interface PubsubCall {
  method: string;
  path: string;
  body: unknown;
  authorized: boolean;
}

/** A Forms watch as the stand-in keeps it. */
export interface StandInFormWatch {
  id: string;
  eventType: string;
  topic: string;
  expireTime: string;
  deleted: boolean;
}

export interface StandInPubsub {
  url: string;
  /** The JWKS document's URL (`SVC_GOOGLE_JWKS_URL`). */
  jwksUrl: string;
  calls: PubsubCall[];
  /** The mailbox's address (`users.getProfile`). */
  email: string;
  /** Gmail's watch: the topic it publishes to, its expiry (epoch ms), whether it was stopped. */
  gmail: { topic: string; expiration: number; stopped: boolean; watches: number };
  /** History records the next `users.history.list` from the current history id gives. */
  history: Record<string, unknown>[];
  /** `users.history.list` answers 503 while set (Google down for that call). */
  historyDown: boolean;
  forms: StandInFormWatch[];
  /** The form `forms.get` answers, and the responses `responses.list` answers. */
  form: Record<string, unknown>;
  responses: Record<string, unknown>[];
  /** How long the next watches live, ms (Gmail and each Forms watch). */
  lifeMs: number;
  /** Which bearer tokens are taken (default: the one given at the start). */
  accepts: (token: string) => boolean;
  /** An OIDC token as Google signs it for a push (claims over the defaults), or with `key`. */
  token(claims?: Record<string, unknown>, key?: KeyObject): string;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : null;
}

const b64 = (x: unknown) => Buffer.from(JSON.stringify(x)).toString("base64url");

/**
 * An RS256 JWT of `claims` signed with `key` under key id `kid`, as Google signs a push's
 * OIDC token.
 * @example signJwt({ iss: "https://accounts.google.com", aud, exp }, privateKey, "k1")
 */
export function signJwt(claims: Record<string, unknown>, key: KeyObject, kid: string): string {
  const head = `${b64({ alg: "RS256", kid, typ: "JWT" })}.${b64(claims)}`;
  const sig = createSign("RSA-SHA256").update(head).sign(key).toString("base64url");
  return `${head}.${sig}`;
}

/**
 * A stand-in of Google for Gmail and Forms watches on loopback: the JWKS of a fresh RSA key
 * pair (`/oauth2/v3/certs`), Gmail's users.watch, users.getProfile, users.history.list,
 * users.stop, and Forms' watches.create, watches.renew, watches.delete, forms.get,
 * responses.list. Every API call must carry `Bearer <token>`.
 */
export async function standInPubsub(token: string, audience: string): Promise<StandInPubsub> {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  let historyN = 100;
  let watchN = 0;
  const g = {
    calls: [] as PubsubCall[],
    email: "ada@example.com",
    gmail: { topic: "", expiration: 0, stopped: false, watches: 0 },
    history: [] as Record<string, unknown>[],
    historyDown: false,
    forms: [] as StandInFormWatch[],
    form: {} as Record<string, unknown>,
    responses: [] as Record<string, unknown>[],
    lifeMs: 7 * 24 * 3600_000,
    accepts: (t: string) => t === token,
  };
  const json = (status: number, body: unknown) => ({ status, body });
  const gmailRoute = (method: string, p: string, q: URLSearchParams, body: unknown) => {
    if (method === "POST" && p === "/gmail/v1/users/me/watch") {
      g.gmail.topic = (body as { topicName: string }).topicName;
      g.gmail.expiration = Date.now() + g.lifeMs;
      g.gmail.watches += 1;
      return json(200, { historyId: String(historyN), expiration: String(g.gmail.expiration) });
    }
    if (method === "GET" && p === "/gmail/v1/users/me/profile") {
      return json(200, { emailAddress: g.email, historyId: String(historyN) });
    }
    if (method === "GET" && p === "/gmail/v1/users/me/history" && g.historyDown) {
      return json(503, { error: { message: "Backend Error" } });
    }
    if (method === "GET" && p === "/gmail/v1/users/me/history") {
      if (Number(q.get("startHistoryId")) !== historyN)
        return json(404, { error: { message: "Requested entity was not found." } });
      const history = g.history.splice(0);
      historyN += history.length;
      return json(200, { history, historyId: String(historyN) });
    }
    if (method === "POST" && p === "/gmail/v1/users/me/stop") {
      g.gmail.stopped = true;
      return json(204, null);
    }
    return null;
  };
  const formsRoute = (method: string, p: string, body: unknown) => {
    const m = /^\/v1\/forms\/([^/]+)(\/watches(?:\/([^/:]+)(:renew)?)?|\/responses)?$/.exec(p);
    if (!m) return null;
    const [, , sub, watchId, renew] = m;
    if (method === "GET" && !sub) return json(200, g.form);
    if (method === "GET" && sub === "/responses") return json(200, { responses: g.responses });
    const expireTime = new Date(Date.now() + g.lifeMs).toISOString();
    if (method === "POST" && sub === "/watches") {
      const w = (body as { watch: { eventType: string; target: { topic: { topicName: string } } } })
        .watch;
      const made = {
        id: `watch-${++watchN}`,
        eventType: w.eventType,
        topic: w.target.topic.topicName,
        expireTime,
        deleted: false,
      };
      g.forms.push(made);
      return json(200, { ...made, createTime: new Date().toISOString(), state: "ACTIVE" });
    }
    const found = g.forms.find((w) => w.id === watchId && !w.deleted);
    if (!found) return json(404, { error: { message: "Watch not found" } });
    if (method === "POST" && renew) {
      found.expireTime = expireTime;
      return json(200, found);
    }
    if (method === "DELETE") {
      found.deleted = true;
      return json(200, {});
    }
    return null;
  };
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url!, "http://stand-in");
      if (url.pathname === "/oauth2/v3/certs") {
        const jwk = { ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "RS256", use: "sig" };
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ keys: [jwk] }));
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const authorized = bearer !== undefined && g.accepts(bearer);
      g.calls.push({ method: req.method!, path: url.pathname + url.search, body, authorized });
      const out = !authorized
        ? json(401, { error: { message: "Invalid Credentials" } })
        : (gmailRoute(req.method!, url.pathname, url.searchParams, body) ??
          formsRoute(req.method!, url.pathname, body) ??
          json(404, { error: { message: `no route ${req.method} ${url.pathname}` } }));
      res.writeHead(out.status, { "content-type": "application/json" });
      res.end(out.status === 204 ? undefined : JSON.stringify(out.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const now = () => Math.floor(Date.now() / 1000);
  return Object.assign(g, {
    url,
    jwksUrl: `${url}/oauth2/v3/certs`,
    token: (claims: Record<string, unknown> = {}, key: KeyObject = privateKey) =>
      signJwt(
        {
          iss: "https://accounts.google.com",
          aud: audience,
          email: "pubsub-push@proj.iam.gserviceaccount.com",
          email_verified: true,
          iat: now(),
          exp: now() + 3600,
          ...claims,
        },
        key,
        "k1",
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/**
 * A Pub/Sub push as Google posts it (the wrapped form): `data` base64 JSON, `attributes`,
 * with `Authorization: Bearer <jwt>` (none when `jwt` is null).
 * @example await pushTo(`${emu.url}/google/pubsub/gmail`, jwt, { emailAddress, historyId })
 */
export function pushTo(
  url: string,
  jwt: string | null,
  data: unknown,
  attributes: Record<string, string> = {},
  messageId = String(Math.floor(Math.random() * 1e12)),
): Promise<Response> {
  const message = {
    data: Buffer.from(JSON.stringify(data)).toString("base64"),
    attributes,
    messageId,
    publishTime: "2026-12-06T08:00:00.000Z",
  };
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(jwt && { authorization: `Bearer ${jwt}` }) },
    body: JSON.stringify({ message, subscription: "projects/p/subscriptions/hookline" }),
  });
}
