import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCli, stopAll } from "./support/cli-process.ts";
import { repoRoot, testPython } from "./support/python.ts";

/**
 * Issue 40: `workflow_sdk.testing`'s stand-in API server, run as a program
 * (`python3 -m workflow_sdk.testing.serve_stand_in slack --save …`), stands in for Slack's API for
 * the real service: a project deployed with `cli up --deploy`, its connection's `base_url` the
 * stand-in's, answers a webhook through `slack_client(…).chat_postMessage`, and the stand-in's
 * saved recording holds the calls the client made (slack_sdk's test stand-in package, as in
 * test/connection-examples.test.ts: slack_sdk is not installable here).
 */

const STAND_INS = join(repoRoot, "python-runtime", "tests", "stand_ins");
const WEBHOOK = /^│ webhook "post": (http:\/\/127\.0\.0\.1:\d+\/webhooks\/[0-9a-z]{26}) +│$/;

let home: string;
let python: string;
let standIn: ChildProcess | undefined;

beforeAll(async () => {
  python = await testPython();
  home = await mkdtemp(join(tmpdir(), "hookline-stand-in-"));
}, 180_000);
afterEach(async () => {
  await stopAll();
  if (standIn && standIn.exitCode === null) standIn.kill("SIGTERM");
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** The stand-in as a program; its URL from the first line it prints. */
async function startStandIn(save: string): Promise<{ url: string; done: Promise<number | null> }> {
  const child = spawn(
    python,
    ["-m", "workflow_sdk.testing.serve_stand_in", "slack", "--save", save],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  standIn = child;
  const done = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((ok, fail) => {
    lines.once("line", ok);
    child.once("exit", (code) => fail(new Error(`the stand-in exited (${code})`)));
  });
  return { url: (JSON.parse(first) as { url: string }).url, done };
}

const HANDLER = `import autokitteh
from autokitteh.slack import slack_client


def on_post(event):
    note = event.data.body.json
    reply = slack_client("slack_conn").chat_postMessage(channel=note["channel"], text=note["text"])
    autokitteh.http_outcome(200, json={"ts": reply["ts"], "channel": reply["channel"]})
`;

describe("testing.stand_in for the real service", () => {
  it("answers a deployed project's Slack client named by <conn>__base_url, and records its calls", async () => {
    const recording = join(home, "recording.json");
    const api = await startStandIn(recording);
    const dir = await mkdtemp(join(home, "project-"));
    await writeFile(join(dir, "handlers.py"), HANDLER);
    // The vars api.env("slack_conn") gives, here as the connection's vars in the manifest.
    const manifest = `version: v2
project:
  name: stand_in_demo
connections:
  - name: slack_conn
    integration: slack
    vars:
      - name: base_url
        value: ${api.url}/api/
      - name: oauth_access_token
        value: xoxb-stand-in
        secret: true
triggers:
  - name: post
    type: webhook
    event_type: post
    call: handlers.py:on_post
    is_sync: true
`;
    await writeFile(join(dir, "manifest.yaml"), manifest);
    const up = startCli(
      ["up", "--mode", "dev", "--port", "0", "--deploy", join(dir, "manifest.yaml")],
      {
        XDG_DATA_HOME: join(home, "data"),
        XDG_CONFIG_HOME: join(home, "config"),
        SVC_WORKER_PYTHON: python,
        SVC_STORAGE: "memory:",
        PYTHONPATH: [STAND_INS, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
      },
    );
    const url = WEBHOOK.exec(await up.until("out", WEBHOOK))![1]!;

    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ channel: "C42", text: "deployed" }),
    });
    const body = (await res.json()) as { ts: string; channel: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.channel).toBe("C42");
    expect(body.ts).toMatch(/^\d+\.\d{6}$/);

    standIn!.stdin!.end(); // the program stops when its input closes, then saves
    expect(await api.done).toBe(0);
    type Exchange = {
      request: {
        method: string;
        path: string;
        headers: [string, string][];
        body: { text: string };
      };
      reply: { status: number; body: { json: { ok: boolean; ts?: string } } };
    };
    const { exchanges } = JSON.parse(await readFile(recording, "utf8")) as {
      exchanges: Exchange[];
    };
    expect(exchanges.map((e) => `${e.request.method} ${e.request.path} ${e.reply.status}`)).toEqual(
      ["POST /api/auth.test 200", "POST /api/chat.postMessage 200"],
    );
    const post = exchanges[1]!;
    expect(JSON.parse(post.request.body.text)).toEqual({ channel: "C42", text: "deployed" });
    const auth = post.request.headers.find(([name]) => name.toLowerCase() === "authorization");
    expect(auth?.[1]).toBe("Bearer xoxb-stand-in");
    expect(post.reply.body.json.ts).toBe(body.ts);
  }, 120_000);
});
