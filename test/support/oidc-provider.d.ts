// The little of oidc-provider (which ships no types) that test/support/oidc.ts uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Ctx {
    path: string;
    method: string;
    headers: Record<string, string | string[] | undefined>;
    status: number;
    query: Record<string, unknown>;
    req: IncomingMessage;
    res: ServerResponse;
    body: unknown;
    redirect(url: string): void;
    oidc: { params?: Record<string, unknown>; client?: { clientId: string } };
  }
  interface Client {
    grantTypeAllowed(type: string): boolean;
  }
  class Grant {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Grant: typeof Grant;
    use(middleware: (ctx: Ctx, next: () => Promise<void>) => Promise<void>): void;
    on(event: "grant.success", listener: (ctx: Ctx) => void): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(
      req: IncomingMessage,
      res: ServerResponse,
    ): Promise<{ params: Record<string, unknown> }>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
  }
  export type { Client, Ctx };
}
