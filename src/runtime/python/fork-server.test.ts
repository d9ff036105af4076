import { readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import type net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPython } from "../../../test/support/python.ts";
import { ForkServer } from "./fork-server.ts";
import { serverEnv } from "./serve-process.ts";

function firstLine(socket: net.Socket): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const nl = text.indexOf("\n");
      if (nl !== -1) resolve(JSON.parse(text.slice(0, nl)) as Record<string, unknown>);
    });
    socket.on("error", reject);
    socket.resume(); // a connection made ahead comes paused
  });
}

/** Running, not a zombie: an orphan's zombie waits for an init that may not reap it soon. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("ForkServer", () => {
  let python: string;
  let tmp: string;
  beforeAll(async () => {
    python = await testPython();
    tmp = await mkdtemp(join(tmpdir(), "hl-fs-"));
  }, 180_000);
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it("forks a process per connection, restarts after dying, and disposes cleanly", async () => {
    const server = new ForkServer(python);
    const a = await server.connect();
    const helloA = await firstLine(a);
    expect(helloA).toMatchObject({ type: "hello", pid: expect.any(Number) });
    const serverPid = server.pid!;
    expect(alive(serverPid)).toBe(true);
    const b = await server.connect();
    const helloB = await firstLine(b);
    expect(helloB.pid).not.toBe(helloA.pid);

    process.kill(serverPid, "SIGKILL");
    // Its children go with it (PDEATHSIG), so their sockets close.
    await until(() => a.destroyed || a.readableEnded);
    await until(() => server.pid === undefined);
    const c = await server.connect();
    expect(await firstLine(c)).toMatchObject({ type: "hello" });
    const newPid = server.pid!;
    expect(newPid).not.toBe(serverPid);

    await Promise.all([server.dispose(), server.dispose()]);
    expect(alive(newPid)).toBe(false);
    expect(alive(Number(helloB.pid))).toBe(false);
    await expect(server.connect()).rejects.toThrow(/shut down/);
    for (const s of [a, b, c]) s.destroy();
  }, 30_000);

  it("makes the next connection once a session is past its start, not while it starts", async () => {
    const server = new ForkServer(python, { refillAfterMs: 600_000 });
    try {
      const a = await server.connect();
      expect(await firstLine(a)).toMatchObject({ type: "hello" });
      expect(server.spares()).toBe(0); // said only `hello`: its start is still on its way
      a.write("{}\n"); // no start: the process answers `done` (an error) and exits
      await until(() => server.spares() === 1);
      const b = await server.connect(); // the one made ahead
      expect(await firstLine(b)).toMatchObject({ type: "hello" });
      expect(server.spares()).toBe(0);
      b.destroy(); // a close counts as past its start too
      await until(() => server.spares() === 1);
      a.destroy();
    } finally {
      await server.dispose();
    }
    const quiet = new ForkServer(python, { refillAfterMs: 1 });
    try {
      const c = await quiet.connect();
      await until(() => quiet.spares() === 1); // silent past refillAfterMs: made anyway
      c.destroy();
    } finally {
      await quiet.dispose();
    }
  }, 30_000);

  it("never hands a session the process made ahead that retire() drops", async () => {
    const server = new ForkServer(python, { refillAfterMs: 1 });
    try {
      const a = await server.connect();
      await until(() => server.spares() === 1);
      // retire() begins (it drops the process made ahead) and, in the same tick, a session
      // asks for a process: it is refused (session-run.ts then runs it on the cold server),
      // never given the socket retire() destroys.
      const retiring = server.retire();
      const b = await server.connect().catch((e: Error) => e);
      await retiring;
      expect(b).toBeInstanceOf(Error);
      expect((b as Error).message).toMatch(/shut down/);
      a.destroy();
    } finally {
      await server.dispose();
    }
  }, 30_000);

  it("says why when the server exits before it is ready", async () => {
    const broken = join(tmp, "broken-python");
    await writeFile(broken, "#!/bin/sh\necho 'ImportError: no workflow_sdk here' >&2\nexit 3\n");
    await chmod(broken, 0o755);
    const server = new ForkServer(broken);
    await expect(server.connect()).rejects.toThrow(
      /Python fork server exited \(code 3\) before it was ready:\nImportError: no workflow_sdk here/,
    );
    await server.dispose();
  });

  it("gives up on a server that never says ready", async () => {
    const silent = join(tmp, "silent-python");
    await writeFile(silent, "#!/bin/sh\nexec sleep 30\n");
    await chmod(silent, 0o755);
    const server = new ForkServer(silent, { readyTimeoutMs: 200 });
    await expect(server.connect()).rejects.toThrow(/did not start within 200 ms/);
    await server.dispose();
  });

  it("keeps the service's own settings out of Python's environment", () => {
    const env = serverEnv({ PATH: "/bin", SVC_API_TOKEN: "secret", NODE_OPTIONS: "x", HOME: "/h" });
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", PYTHONUNBUFFERED: "1" });
    // The OAuth apps' secrets are the service's: a session gets tokens, never what mints them.
    const oauth = serverEnv({
      GOOGLE_CLIENT_ID: "id",
      GOOGLE_CLIENT_SECRET: "s",
      JIRA_CLIENT_SECRET: "j",
    });
    expect(oauth).toEqual({ GOOGLE_CLIENT_ID: "id", PYTHONUNBUFFERED: "1" });
  });
});
