import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { OidcClient } from "./oidc.ts";
import { repoRoot, testPython } from "./python.ts";

/** google-api-python-client and google-auth from this machine's index, once per checkout. */
export const GOOGLE_LIBS = join(repoRoot, "node_modules", ".cache", "hookline-e2e-google");

/**
 * Installs the Google client libraries for the sessions' Python (pip, the machine's own index).
 * @example process.env.PYTHONPATH = await googleLibs();
 */
export async function googleLibs(): Promise<string> {
  const python = await testPython();
  const probe = await execa(python, ["-c", "import googleapiclient, google.oauth2"], {
    env: { PYTHONPATH: GOOGLE_LIBS },
    reject: false,
  });
  if (!probe.failed) return GOOGLE_LIBS;
  const args = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--retries", "0"];
  args.push("--target");
  const pip = await execa(
    python,
    [...args, GOOGLE_LIBS, "google-api-python-client", "google-auth"],
    { all: true, reject: false, stdin: "ignore" },
  );
  if (pip.failed) throw new Error(`pip could not install the Google libraries:\n${pip.all}`);
  return GOOGLE_LIBS;
}

/** An AutoKitteh project (v1) that reads a Gmail mailbox through `autokitteh.google`. */
export function gmailProject(name = "mailbox"): string {
  const dir = mkdtempSync(join(tmpdir(), "hookline-oauth-project-"));
  writeFileSync(
    join(dir, "manifest.yaml"),
    `version: v1
project:
  name: ${name}
  connections:
    - name: gmail_conn
      integration: gmail
  triggers:
    - name: read
      type: webhook
      event_type: get
      call: program.py:on_read
    - name: env_token
      type: webhook
      event_type: post
      call: program.py:on_env_token
    - name: refresh
      type: webhook
      event_type: put
      call: program.py:on_refresh
    - name: read_stale
      type: webhook
      event_type: delete
      call: program.py:on_read_stale
    - name: refresh_raise
      type: webhook
      event_type: patch
      call: program.py:on_refresh_raise
`,
  );
  writeFileSync(
    join(dir, "program.py"),
    `import hashlib
import os

from autokitteh.connections import refresh_oauth
from autokitteh.google import gmail_client


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def on_read(event):
    gmail = gmail_client("gmail_conn")
    found = gmail.users().messages().list(userId="me").execute()
    print("messages:", ",".join(m["id"] for m in found["messages"]))


def on_read_stale(event):
    # As if the token ran out while the session ran: google-auth refreshes through the service.
    os.environ["gmail_conn__oauth_Expiry"] = "2000-01-01 00:00:00 +0000 UTC"
    on_read(event)


def on_env_token(event):
    print("env token:", digest(os.environ["gmail_conn__oauth_AccessToken"]))
    # The OAuth app's secret stays in the service (its environment has it).
    print("client secret here:", "GOOGLE_CLIENT_SECRET" in os.environ, "google-s3cret" in str(os.environ))


def on_refresh(event):
    token, expiry = refresh_oauth("gmail", "gmail_conn")
    print("refreshed:", digest(token), expiry is not None)
    print("the token itself:", token)


def on_refresh_raise(event):
    token, _ = refresh_oauth("gmail", "gmail_conn")
    raise RuntimeError(f"the API refused the token {token}")
`,
  );
  return dir;
}

/** The digest the project prints of a token. */
export const digest = (text: string) => createHash("sha256").update(text).digest("hex");

/** A stand-in Gmail API: it takes a bearer token only when `valid` says so, and records each. */
export async function standInGmail(valid: (token: string) => Promise<boolean>) {
  const tokens: string[] = [];
  const server = createServer(async (req, res) => {
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    tokens.push(token);
    const ok = req.url?.startsWith("/gmail/v1/users/me/messages") && (await valid(token));
    res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify(ok ? { messages: [{ id: "m1", threadId: "t1" }] } : { error: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The OAuth server's client for the service's Google app, calling back to `serviceUrl`. */
export function googleClient(serviceUrl: string): OidcClient {
  return {
    client_id: "google-app",
    client_secret: "google-s3cret",
    redirect_uris: [`${serviceUrl}/oauth/redirect/google`],
    token_endpoint_auth_method: "client_secret_post",
  };
}

/** The service's settings for that Google app, its URLs at the OAuth server `oidcUrl`. */
export function googleSettings(oidcUrl: string): Record<string, string> {
  return {
    GOOGLE_CLIENT_ID: "google-app",
    GOOGLE_CLIENT_SECRET: "google-s3cret",
    SVC_OAUTH_GOOGLE_AUTHORIZE_URL: `${oidcUrl}/auth`,
    SVC_OAUTH_GOOGLE_TOKEN_URL: `${oidcUrl}/token`,
    SVC_OAUTH_GOOGLE_USERINFO_URL: `${oidcUrl}/me`,
  };
}
