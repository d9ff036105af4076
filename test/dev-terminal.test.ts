import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../src/model/records.ts";
import { startCli as spawnCli, stopAll } from "./support/cli-process.ts";
import { testPython } from "./support/python.ts";

/**
 * `cli up --mode dev --deploy`, real Python: the terminal shows each session as it ends (its
 * trigger, state, time and page; its prints beneath; a failure's last line), `--quiet` shows
 * none; the deploy's lines carry whole URLs; a traceback names the project's file.
 */
const MANIFEST = `version: v2
project:
  name: terminal
triggers:
  - name: greet
    type: webhook
    call: handlers.py:on_greet
  - name: boom
    type: webhook
    call: handlers.py:on_boom
`;
const HANDLERS = `def on_greet(event):
    print("hello from greet")
    print("a second print")


def lookup(data):
    return data["name"]


def on_boom(event):
    print("before the error")
    lookup({})
`;
const BOXED = /^│ webhook "(\w+)": (http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}) +│$/;
const PAGE = "http:\\/\\/127\\.0\\.0\\.1:\\d+\\/ui\\/sessions\\/(ses_[0-9a-z]{26})";

let home = "";
let python = "";
let manifest = "";
beforeAll(async () => {
  python = await testPython();
  home = await mkdtemp(join(tmpdir(), "hookline-dev-terminal-"));
  manifest = join(home, "manifest.yaml");
  await writeFile(manifest, MANIFEST);
  await writeFile(join(home, "handlers.py"), HANDLERS);
}, 180_000);
afterEach(stopAll);
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** `cli up --mode dev --deploy` on a data home of its own; resolves with each trigger's URL. */
async function up(...flags: string[]) {
  const cli = spawnCli(["up", "--mode", "dev", "--port", "0", "--deploy", manifest, ...flags], {
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    SVC_WORKER_PYTHON: python,
    SVC_STORAGE: "memory:",
  });
  await cli.until("out", BOXED, 2);
  const urls = Object.fromEntries(
    cli.out.flatMap((l) => {
      const m = BOXED.exec(l);
      return m ? [[m[1]!, m[2]!]] : [];
    }),
  );
  const base = /listening on (http:\S+)/.exec(cli.out.join("\n"))![1]!;
  return { cli, urls, base };
}

async function post(url: string): Promise<string> {
  const res = await fetch(url, { method: "POST", body: "{}" });
  return ((await res.json()) as { session_id: string }).session_id;
}

describe("the dev terminal", () => {
  it("shows each session as it ends: a line, its prints beneath, a failure's last line", async () => {
    const { cli, urls, base } = await up();
    // The deploy's lines name whole URLs, ready to copy.
    expect(cli.out).toContainEqual(
      expect.stringMatching(
        /^\[exec\] trigger "greet" created, webhook path is "\/webhooks\/[0-9a-z]{26}", URL http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}$/,
      ),
    );

    const greet = await post(urls.greet!);
    const line = await cli.until("out", /^\[greet\] /);
    expect(line).toMatch(new RegExp(`^\\[greet\\] completed in \\d+(\\.\\d)? m?s  ${PAGE}$`));
    expect(line).toContain(`${base}/ui/sessions/${greet}`);
    await cli.until("out", /^ {4}a second print$/);
    const at = cli.out.indexOf(line);
    expect(cli.out.slice(at + 1, at + 3)).toEqual(["    hello from greet", "    a second print"]);

    const boom = await post(urls.boom!);
    const failed = await cli.until("out", /^\[boom\] /);
    expect(failed).toMatch(new RegExp(`^\\[boom\\] error in \\d+(\\.\\d)? m?s  ${PAGE}$`));
    await cli.until("out", /^ {4}error: /);
    const from = cli.out.indexOf(failed);
    expect(cli.out.slice(from + 1, from + 3)).toEqual([
      "    before the error",
      "    error: KeyError: 'name'",
    ]);

    // The traceback names the project's file as the project has it, not the build's copy.
    const res = await fetch(`${base}/api/v1/sessions/${boom}`);
    const { session } = (await res.json()) as { session: SessionRecord };
    expect(session.error?.traceback).toMatch(/File "handlers\.py", line \d+, in lookup/);
    expect(session.error?.traceback).not.toContain("/builds/");
  }, 120_000);

  it("--quiet shows no session", async () => {
    const { cli, urls, base } = await up("--quiet");
    const id = await post(urls.greet!);
    // Ended (its watch stream closes with the end), and a moment for a line that should not come.
    await (await fetch(`${base}/api/v1/sessions/${id}/watch`)).text();
    await new Promise((r) => setTimeout(r, 500));
    expect(cli.out.filter((l) => l.startsWith("[greet]"))).toEqual([]);
  }, 120_000);
});
