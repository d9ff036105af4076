import { randomBytes } from "node:crypto";
import { createStorage } from "unstorage";
import { describe, expect, it } from "vitest";
import { oneConnectionProject } from "../../test/support/records.ts";
import { localCluster } from "../cluster/cluster.ts";
import { keyedLock } from "../locks.ts";
import { createSecretBox } from "../secrets.ts";
import { createStores } from "../storage/records.ts";
import type { SaveInstallation } from "./app-install.ts";
import type { Authorized } from "./hooks.ts";
import { createOAuth } from "./service.ts";

const doc = oneConnectionProject("gh", "github");

/** The service's own App (id, key, name), an installation saver that records what it saved. */
async function setUp(saveFails = false) {
  const stores = createStores(createStorage());
  await stores.projects.put(structuredClone(doc));
  const saved: string[] = [];
  const installation: SaveInstallation = async (_project, connection, id) => {
    if (saveFails) throw new Error("storage down");
    saved.push(`${connection} ${id}`);
    return { install_id: id };
  };
  const oauth = createOAuth({
    projects: {
      stores,
      secrets: createSecretBox(randomBytes(32)),
      locks: keyedLock(),
      changed: () => {},
    },
    storage: stores.storage,
    cluster: localCluster(),
    settings: { SVC_GITHUB_APP_ID: "7", SVC_GITHUB_PRIVATE_KEY: "PEM", GITHUB_APP_NAME: "svc-app" },
    log: { info: () => {}, warn: () => {}, error: () => {} },
    installation,
  });
  const heard: Authorized[] = [];
  oauth.onAuthorized((a) => void heard.push(a));
  /** An installation started and sent back by GitHub with `setup_action`. */
  const install = async (setup_action: string) => {
    const { url } = await oauth.flow.start("con_1", "github", "http://svc", "cookie");
    expect(url).toMatch(/^https:\/\/github\.com\/apps\/svc-app\/installations\/new\?state=/);
    const state = new URL(url).searchParams.get("state")!;
    const cb = { state, installation_id: "77", setup_action };
    return oauth.flow.finish("github", cb, "cookie");
  };
  return { install, heard, saved };
}

describe("a GitHub App installation from the browser", () => {
  it("tells onAuthorized, as an OAuth authorization does, once the installation is saved", async () => {
    const { install, heard, saved } = await setUp();
    await expect(install("install")).resolves.toMatchObject({ provider: "GitHub" });
    expect(saved).toEqual(["gh 77"]);
    expect(heard).toEqual([
      { projectId: "prj_1", connection: "gh", connectionId: "con_1", integration: "github" },
    ]);
  });

  it("tells nothing of an installation refused or not saved", async () => {
    const { install, heard } = await setUp();
    await expect(install("request")).rejects.toThrow(/owner of the account must approve/);
    const failing = await setUp(true);
    await expect(failing.install("install")).rejects.toThrow(/storage down/);
    expect([...heard, ...failing.heard]).toEqual([]);
  });
});
