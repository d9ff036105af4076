export { type OAuthPreset, PRESETS, presetOf, type VarScheme } from "../providers/oauth-presets.ts";
export type { SaveInstallation } from "./app-install.ts";
export { type AuthorizationFlow, type Callback, type Finished, Refusal } from "./authorize.ts";
export { type OAuthEnv, presetUrl, settingName } from "./client.ts";
export type { Authorized, AuthorizedListener } from "./hooks.ts";
export {
  type FreshToken,
  NEEDS_AUTHORIZATION,
  REFRESH_AHEAD_MS,
  RefreshError,
  type TokenRefresher,
} from "./refresh.ts";
export { createOAuth, type OAuthDeps, type OAuthService } from "./service.ts";
export { STATUS_VAR } from "./store.ts";
export { startPath, ticketValid } from "./ticket.ts";
export { expiryText, parseExpiry, tokenVarNames } from "./tokens.ts";
