import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeployResult } from "../src/deploy/index.ts";
import { browserJar } from "./support/browser-jar.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { type StandInGoogle, standInGoogle } from "./support/google-api.ts";
import { googleClient, googleSettings } from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";

/**
 * "Authorize with Google" for a Calendar connection, end to end: a real OAuth server
 * (oidc-provider) plays Google's, a stand-in Calendar API takes only the tokens it issued, and
 * a cookie jar is the browser. The watch channel is made before the browser's "Connected" page
 * is answered: the stand-in is slow on purpose, so a channel left to the background would come
 * after the page.
 */
const FIXTURE = `${import.meta.dirname}/fixtures/connections-google`;
const saved = { ...process.env };
const emu = useEmulator();
let oidc: OidcServer;
let google: StandInGoogle;

beforeAll(async () => {
  oidc = await oidcServer([googleClient(emu.url)]);
  google = await standInGoogle("none");
  google.accepts = (t) => oidc.grants.some((g) => g.access_token === t);
  google.slowMs = 300;
  Object.assign(process.env, googleSettings(oidc.url));
});

afterAll(async () => {
  process.env = saved;
  await google?.close();
  await oidc?.close();
});

const vars = async () => {
  const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>(
    "/envs/google_cal/vars",
  );
  return Object.fromEntries(vars.map((x) => [x.name.replace(/^cal__/, ""), x.value]));
};

describe("Authorize with Google (Calendar)", () => {
  it("makes the connection's watch channel before the Connected page is answered", async () => {
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = [
      "version: v1",
      "project:",
      "  name: google_cal",
      "  connections:",
      "    - name: cal",
      "      integration: googlecalendar",
      "      vars: [{name: base_url, value: BASE}]",
      "  triggers:",
      "    - {name: on_event, connection: cal, call: program.py:on_event}",
    ]
      .join("\n")
      .replace("BASE", google.url);
    const deployed = await emu.api<DeployResult>("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const inbound = emu.url + deployed.connections[0]!.inbound_path;
    const { connections } = await emu.api<{ connections: { id: string }[] }>(
      "/connections?project=google_cal",
    );
    expect(google.calls).toEqual([]);

    const jar = browserJar();
    const page = await jar.follow(
      `${emu.url}/oauth/start/googlecalendar?cid=${connections[0]!.id}`,
    );
    // Taken at once, before anything else can run: what the page's answer waited for.
    const channels = [...google.channels];
    const atPage = await vars();
    expect(page.status).toBe(200);
    expect(page.text).toContain("google_cal/cal is authorized with Google");
    expect(channels).toHaveLength(1);
    expect(channels[0]).toMatchObject({ kind: "calendar", address: inbound });
    expect(atPage).toMatchObject({
      CalendarEventsWatchID: channels[0]!.id,
      CalendarEventsSyncToken: "sync-1",
      CalendarEventsWatchToken: "********",
      oauth_AccessToken: "********",
    });
    // The token the OAuth server issued is the one Google was called with.
    expect(oidc.grants.filter((g) => g.grant_type === "authorization_code")).toHaveLength(1);
    expect(google.calls.length).toBeGreaterThan(0);
    expect(google.calls.every((c) => c.authorized)).toBe(true);
    const listed = await emu.api<{ connections: { status: { state: string } }[] }>(
      "/connections?project=google_cal",
    );
    expect(listed.connections[0]!.status.state).toBe("ready");
  });
});
