import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./python.ts";

// No vitest here: bench/scale.ts runs fleets too.

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createNetServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await fetch(`${url}/healthz`).catch(() => null))?.ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not become healthy within ${ms} ms`);
}

/**
 * Where instance `i` writes: nowhere, or with HOOKLINE_FLEET_LOGS=<folder> appended to
 * <folder>/instance-<i>.log (for reading what each instance did when a fleet test fails).
 */
function instanceLog(i: number): "ignore" | number {
  const dir = process.env.HOOKLINE_FLEET_LOGS;
  return dir ? openSync(join(dir, `instance-${i}.log`), "a") : "ignore";
}

/** One `cli up --mode prod` process of a fleet; killed with SIGKILL and started again. */
export interface Instance {
  index: number;
  port: number;
  url: string;
  up: boolean;
  child: ChildProcess | null;
}

/**
 * Several instances of the service as separate processes on one storage URL, behind a
 * round-robin router (node:http) that skips instances it knows are down, as a health-checking
 * router would. A response the router had to make up (the instance died holding the request)
 * is a 502; every response names its instance in `x-upstream`.
 * @example const fleet = await startFleet({ count: 3, storage, python, token }); fleet.url
 */
export class Fleet {
  readonly instances: Instance[] = [];
  /** When each instance was killed (ms), for telling a casualty from a failure. */
  readonly kills: { index: number; at: number }[] = [];
  #homes: string[] = [];
  #env: Record<string, string>;
  #only: (i: number) => Record<string, string>;
  #router: Server | null = null;
  #next = 0;
  url = "";

  /** `env` for every instance; `only(i)`, what instance `i` gets on top (its own proxy, say). */
  constructor(
    env: Record<string, string>,
    only: (i: number) => Record<string, string> = () => ({}),
  ) {
    this.#env = env;
    this.#only = only;
  }

  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      this.#homes.push(mkdtempSync(join(tmpdir(), `hookline-fleet-${i}-`)));
      this.instances.push({
        index: i,
        port,
        url: `http://127.0.0.1:${port}`,
        up: false,
        child: null,
      });
    }
    await Promise.all(this.instances.map((inst) => this.restart(inst.index)));
    this.#router = createServer((req, res) => this.#route(req, res));
    const port = await freePort();
    await new Promise<void>((r) => this.#router!.listen(port, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts instance `i` (again) and resolves once it answers /healthz. */
  async restart(i: number): Promise<void> {
    const inst = this.instances[i]!;
    const home = this.#homes[i]!;
    const out = instanceLog(i);
    inst.child = spawn(
      "node",
      [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "prod", "--port", String(inst.port)],
      {
        env: {
          ...process.env,
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          ...this.#env,
          ...this.#only(i),
        },
        detached: true,
        stdio: ["ignore", out, out],
      },
    );
    if (out !== "ignore") closeSync(out);
    await waitHealthy(inst.url, 60_000);
    inst.up = true;
  }

  /**
   * Deploys a flat project folder through instance 0 (bearer `token`); returns each trigger's
   * webhook path.
   */
  async deploy(dir: string, token: string): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const name of readdirSync(dir)) files[name] = readFileSync(join(dir, name), "utf8");
    const manifest = files["manifest.yaml"]!;
    delete files["manifest.yaml"];
    return this.deploySource(manifest, files, token);
  }

  /**
   * Deploys a project given as text (`files`: name → content, handlers.py and the like) through
   * instance 0; returns each trigger's webhook path.
   * @example const hooks = await fleet.deploySource(MANIFEST, { "handlers.py": HANDLERS }, token);
   */
  async deploySource(
    manifest: string,
    sources: Record<string, string>,
    token: string,
  ): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const [name, text] of Object.entries(sources)) {
      files[name] = Buffer.from(text).toString("base64");
    }
    const api = `${this.instances[0]!.url}/api/v1`;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const res = await fetch(`${api}/deploy`, {
      method: "POST",
      headers,
      body: JSON.stringify({ manifest, files }),
    });
    if (res.status !== 200) throw new Error(`deploy: ${res.status} ${await res.text()}`);
    const { project_id } = (await res.json()) as { project_id: string };
    const list = await fetch(`${api}/triggers?project=${project_id}`, { headers });
    const { triggers } = (await list.json()) as {
      triggers: { name: string; webhook_path: string }[];
    };
    return Object.fromEntries(triggers.map((t) => [t.name, t.webhook_path]));
  }

  /** Durable sessions parked (waiting without a process) on every instance up, from /metrics. */
  async parked(token: string): Promise<number> {
    let n = 0;
    for (const inst of this.instances.filter((x) => x.up)) {
      const res = await fetch(`${inst.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      n += Number(/^hookline_sessions_parked (\d+)/m.exec(await res.text())?.[1] ?? 0);
    }
    return n;
  }

  /** kill -9 of instance `i` and its Python processes. */
  kill(i: number): void {
    const inst = this.instances[i]!;
    inst.up = false;
    this.kills.push({ index: i, at: Date.now() });
    try {
      process.kill(-inst.child!.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  /**
   * SIGSTOP to instance `i` and its Python processes (a frozen VM): the router skips it until
   * `wake`.
   */
  freeze(i: number): void {
    const inst = this.instances[i]!;
    inst.up = false;
    process.kill(-inst.child!.pid!, "SIGSTOP");
  }

  /** SIGCONT to a frozen instance: it goes on from where it stopped. */
  wake(i: number): void {
    const inst = this.instances[i]!;
    process.kill(-inst.child!.pid!, "SIGCONT");
    inst.up = true;
  }

  /** SIGTERM to instance `i` (a platform's stop): resolves once it has exited. */
  async terminate(i: number): Promise<void> {
    const inst = this.instances[i]!;
    inst.up = false;
    const child = inst.child!;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill("SIGTERM");
    await exited;
  }

  /** Whether instance `i` was killed between `from` and `to` (ms). */
  killedBetween(i: number, from: number, to: number): boolean {
    return this.kills.some((k) => k.index === i && k.at >= from && k.at <= to);
  }

  async dispose(): Promise<void> {
    for (const inst of this.instances) {
      try {
        if (inst.child?.pid) process.kill(-inst.child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await new Promise<void>((r) => (this.#router ? this.#router.close(() => r()) : r()));
    for (const home of this.#homes) rmSync(home, { recursive: true, force: true });
  }

  #route(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const tryFrom = (attempt: number) => {
        const up = this.instances.filter((x) => x.up);
        if (up.length === 0 || attempt >= this.instances.length) {
          res.writeHead(503, { "retry-after": "1" }).end("no instance up");
          return;
        }
        const inst = up[this.#next++ % up.length]!;
        let answered = false;
        const out = request(
          {
            host: "127.0.0.1",
            port: inst.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, "content-length": String(body.length) },
          },
          (upstream) => {
            answered = true;
            res.writeHead(upstream.statusCode ?? 502, {
              ...upstream.headers,
              "x-upstream": String(inst.index),
            });
            upstream.pipe(res);
            upstream.on("error", () => res.destroy());
          },
        );
        out.on("error", (err: NodeJS.ErrnoException) => {
          if (answered) return;
          // Not connected: the instance is down (not yet known); try another. The request
          // never reached it.
          if (err.code === "ECONNREFUSED") return tryFrom(attempt + 1);
          // A pooled keep-alive connection the instance closed as it went idle (both sides
          // time out idle connections after 5 s): the request was not read there. Send it again,
          // as Node's documentation of `request.reusedSocket` says a client should.
          if (err.code === "ECONNRESET" && out.reusedSocket) return tryFrom(attempt + 1);
          res.writeHead(502, { "x-upstream": String(inst.index) }).end(`upstream: ${err.message}`);
        });
        out.end(body);
      };
      tryFrom(0);
    });
  }
}
