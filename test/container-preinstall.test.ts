// AutoKitteh's pre-installed packages in the container: installed into the data volume at the
// first start from the index the container reaches (here the machine's local file index, mounted),
// each one that index lacks named, while the service already serves. A file of its own: pip takes
// a minute or two, which runs beside the other container suites.
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildImage,
  type Container,
  containerTestsRun,
  runContainer,
  waitReady,
} from "./support/podman.ts";
import { deployFolder, freePort } from "./support/process.ts";
import { repoRoot } from "./support/python.ts";
import { until } from "./support/until.ts";

const run = await containerTestsRun("container pre-install");
const TOKEN = "preinstall-token";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

describe.runIf(run)("the container's pre-installed packages", () => {
  const id = `hookline-preinstall-${process.pid}`;
  const volume = `${id}-data`;
  const containers: Container[] = [];
  beforeAll(() => buildImage(), 900_000);
  afterAll(async () => {
    for (const c of containers) await c.dispose();
    await execa("podman", ["volume", "rm", "-f", volume], { reject: false });
  });
  const webhooks = async (c: Container) => {
    const res = await fetch(`${c.url}/api/v1/triggers`, { headers: auth });
    const { triggers } = (await res.json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    return Object.fromEntries(triggers.map((t) => [t.name, c.url + t.webhook_path]));
  };

  it("installs AutoKitteh's packages into the data volume at the first start, naming those it lacks", async () => {
    const indexes = await localIndexes();
    if (indexes.length === 0) {
      console.warn(
        "\n*** container image: no file:// package index in pip's config: the pre-install is not tried ***\n",
      );
      return;
    }
    const port = await freePort();
    const since = Date.now();
    const c = await runContainer({
      name: `${id}-preinstall`,
      port,
      env: {
        SVC_API_TOKEN: TOKEN,
        SVC_PREINSTALL: "on",
        // Only the indexes this machine has: the container reaches no other.
        PIP_INDEX_URL: indexes[0]!,
        PIP_EXTRA_INDEX_URL: indexes.slice(1).join(" "),
      },
      volumes: [
        `${volume}:/data`,
        ...indexes.map(
          (u) =>
            `${new URL(u).pathname.replace(/\/simple\/?$/, "")}:${new URL(u).pathname.replace(/\/simple\/?$/, "")}:ro`,
        ),
      ],
    });
    containers.push(c);
    // Ready at once: the packages install behind it.
    await waitReady(c, since);
    const logs = await until(
      "the pre-install to end",
      async () => {
        const out = await c.logs();
        return /preinstall: pre-installed packages/.test(out) && out;
      },
      400_000,
    );
    const summary = /preinstall: (pre-installed packages[^\n]*)/.exec(logs)![1]!;
    const named = [
      ...logs.matchAll(/preinstall: pre-installed package "([^"]+)" not installed: ([^\n]+)/g),
    ];
    console.log(
      `container image: ${summary}; not installed: ${named.map((m) => m[1]).join(", ") || "none"}`,
    );
    expect(
      (await deployFolder(c.url, join(repoRoot, "test/fixtures/preinstalled"), auth)).status,
    ).toBe(200);
    const res = await fetch((await webhooks(c)).versions!, { method: "POST", body: "{}" });
    if (res.status !== 200) {
      // What ended the session: its error as stored, beside the container's last lines.
      const { session_id } = (await res.clone().json()) as { session_id?: string };
      const rec = await fetch(`${c.url}/api/v1/sessions/${session_id}`, { headers: auth });
      const logs = (await c.logs()).slice(-2000);
      expect(res.status, `${(await rec.text()).slice(0, 3000)}\n${logs}`).toBe(200);
    }
    const where = (await res.json()) as Record<string, string>;
    expect(where.requests).toMatch(/^\/data\/hookline\/python\//);
    expect(where.yaml).toMatch(/^\/data\/hookline\/python\//);
  }, 600_000);
});

/** The file:// package indexes pip is configured with on this machine (its index, extra indexes). */
async function localIndexes(): Promise<string[]> {
  const r = await execa("python3", ["-m", "pip", "config", "list"], { reject: false });
  const urls = [...r.stdout.matchAll(/^global\.(?:extra-)?index-url='([^']*)'/gm)].flatMap((m) =>
    m[1]!.split(/\s+/),
  );
  return urls.filter((u) => u.startsWith("file:///"));
}
