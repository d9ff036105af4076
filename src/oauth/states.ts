import { createHash, randomBytes } from "node:crypto";
import { prefixStorage, type Storage } from "unstorage";
import type { Cluster } from "../cluster/cluster.ts";
import { type SecretBox, sameSecret } from "../secrets.ts";

/** How long an authorization may take, from the start link to the provider's callback. */
export const STATE_TTL_MS = 10 * 60_000;

/** One authorization under way, kept server-side under its random `state`. */
export interface PendingAuthorization {
  integration: string;
  project_id: string;
  connection: string;
  connection_id: string;
  /** The callback URL sent to the provider: the code exchange must send the same. */
  redirect_uri: string;
  /** SHA-256 of the browser cookie's value: the callback must come from the same browser. */
  browser: string;
  /** The PKCE verifier, sealed; "" when the preset takes no PKCE. */
  verifier: string;
  expires_at: number;
}

/** A new state's parts: the record to keep, and what goes to the provider and the browser. */
export interface NewState {
  state: string;
  /** The PKCE challenge (S256), or "" without PKCE. */
  challenge: string;
}

/** What taking a state found. */
export type StateLookup =
  | { kind: "ok"; rec: PendingAuthorization }
  | { kind: "unknown" }
  | { kind: "other_browser" };

/**
 * Random 32 bytes, base64url.
 * @example randomToken().length // 43
 */
export const randomToken = () => randomBytes(32).toString("base64url");

/**
 * The hash a state record keeps of the browser cookie's value.
 * @example browserHash("abc").length // 64
 */
export const browserHash = (cookie: string) =>
  createHash("sha256").update(`hookline-oauth-browser:${cookie}`).digest("hex");

/**
 * The pending authorizations, in the service's storage (namespace `oauth-states`), so any
 * instance on the same storage may take the callback. A state is taken once: a claim in this
 * process (checked and made with no await between, so two callbacks at once on one instance
 * cannot both pass) and `cluster.once` across instances, and the record goes when taken; an
 * expired one is refused and removed.
 * @example const states = oauthStates(storage, cluster, box); const s = await states.begin(rec, true);
 */
export function oauthStates(storage: Storage, cluster: Cluster, box: SecretBox) {
  const ns = prefixStorage(storage, "oauth-states");
  /** States claimed in this process, until their records expire. */
  const claimed = new Map<string, number>();
  /** Claims `state` here, first come only; forgets the claims past their records' expiry. */
  function claimHere(state: string, expires: number, now: number): boolean {
    for (const [s, until] of claimed) if (until <= now) claimed.delete(s);
    if (claimed.has(state)) return false;
    claimed.set(state, expires);
    return true;
  }
  return {
    /** Keeps a new pending authorization (with a PKCE pair when `pkce`). */
    async begin(
      rec: Omit<PendingAuthorization, "verifier" | "expires_at">,
      pkce: boolean,
      now: number,
    ): Promise<NewState> {
      const state = randomToken();
      const verifier = pkce ? randomToken() + randomToken() : "";
      const challenge = pkce ? createHash("sha256").update(verifier).digest("base64url") : "";
      const sealed = verifier ? box.seal(verifier) : "";
      await ns.setItem(state, { ...rec, verifier: sealed, expires_at: now + STATE_TTL_MS });
      return { state, challenge };
    },
    /**
     * Takes the pending authorization of `state` for the browser whose cookie hashes to
     * `browser` (it is gone afterwards): `unknown` when never made, taken already or expired;
     * `other_browser` (and kept, so a stolen state cannot spoil its owner's) when another
     * browser holds it. The verifier comes back opened.
     */
    async take(state: string, browser: string, now: number): Promise<StateLookup> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(state)) return { kind: "unknown" };
      const rec = await ns.getItem<PendingAuthorization>(state);
      if (!rec || rec.expires_at <= now) return { kind: "unknown" };
      if (!sameSecret(rec.browser, browser)) return { kind: "other_browser" };
      if (!claimHere(state, rec.expires_at, now)) return { kind: "unknown" };
      if (!(await cluster.once(`oauth-state:${state}`, STATE_TTL_MS))) return { kind: "unknown" };
      await ns.removeItem(state);
      return { kind: "ok", rec: { ...rec, verifier: rec.verifier ? box.open(rec.verifier) : "" } };
    },
  };
}

export type OAuthStates = ReturnType<typeof oauthStates>;
