import type { Logger } from "../log.ts";
import type { OAuthPreset } from "../providers/oauth-presets.ts";

/** A connection whose tokens were just saved by an authorization. */
export interface Authorized {
  projectId: string;
  /** The connection's name in its project (its vars are `<connection>__…`). */
  connection: string;
  /** The connection's `con_…` id. */
  connectionId: string;
  /** The integration (the manifest's `integration:`), e.g. `jira`. */
  integration: string;
  /**
   * The preset it was authorized with: its token var names (`scheme`), URLs, scopes. Absent for
   * a github connection, which is connected by its GitHub App's installation, not a preset.
   */
  preset?: OAuthPreset;
}

/** Called after an authorization's tokens are saved; may read and write the connection's vars. */
export type AuthorizedListener = (a: Authorized) => Promise<void> | void;

/**
 * The seam for what follows an authorization (registering the Jira webhook with the new token,
 * say), or a GitHub App installation completed from the browser (its vars saved, `preset`
 * absent): listeners run in order after the vars are saved, before the browser is answered. A
 * listener that throws is logged and does not undo the authorization, nor stop the others.
 * @example const listeners = authorizedListeners(log); listeners.onAuthorized(async (a) => { if (a.integration === "jira") await register(a); });
 */
export function authorizedListeners(log: Logger) {
  const list: AuthorizedListener[] = [];
  return {
    /**
     * Adds `listener`, called with the project id, the connection's name and id, the
     * integration and the preset after each authorization's tokens are saved. Returns a
     * function that removes it.
     */
    onAuthorized(listener: AuthorizedListener): () => void {
      list.push(listener);
      return () => {
        const i = list.indexOf(listener);
        if (i >= 0) list.splice(i, 1);
      };
    },
    async emit(a: Authorized): Promise<void> {
      for (const listener of [...list]) {
        try {
          await listener(a);
        } catch (e) {
          log.error(`oauth ${a.connection}: a listener after authorization failed`, e);
        }
      }
    },
  };
}

export type AuthorizedListeners = ReturnType<typeof authorizedListeners>;
