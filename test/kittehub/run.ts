/**
 * The kittehub harness: deploys AutoKitteh's projects unchanged to the real service and fires
 * their triggers as a plan says, against a stand-in API (README.md in this folder).
 *
 *   npx tsx test/kittehub/run.ts --kittehub /work/kittehub --plan test/kittehub/plans/<group>.yaml \
 *     [--only <project>[,<project>…]] [--out /tmp/<group>.json]
 *
 * Exits 0 whatever the projects did, 2 on a bad plan or bad arguments.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDiscord } from "./discord.ts";
import { type EntryResult, runEntry } from "./entry.ts";
import { pubsubSetup } from "./google-events.ts";
import { type Entry, loadPlan, PlanError } from "./plan.ts";
import { harnessPython, packageDir, pathsFor, type Service, startService } from "./service.ts";
import { type StandIn, startStandIn } from "./stand-in.ts";

interface Args {
  kittehub: string;
  plan: string;
  only: string[];
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const got: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i] ?? "", argv[i + 1]];
    if (!["--kittehub", "--plan", "--only", "--out"].includes(flag) || value === undefined) {
      throw new PlanError(
        `usage: run.ts --kittehub DIR --plan FILE [--only a,b] [--out FILE] (at "${flag}")`,
      );
    }
    got[flag.slice(2)] = value;
  }
  if (!got.kittehub || !got.plan)
    throw new PlanError("usage: --kittehub DIR and --plan FILE are required");
  const only = (got.only ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return { kittehub: got.kittehub, plan: got.plan, only, out: got.out };
}

/** Entries that share a service: the same stand-in packages, the same proxy. */
interface Group {
  names: string[];
  proxy: boolean;
  entries: Entry[];
}

/** Entries grouped by the stand-in packages they put on the path: one service per group. */
function groups(entries: Entry[], kittehub: string): Map<string, Group> {
  const out = new Map<string, Group>();
  for (const [i, e] of entries.entries()) {
    const where = `entry ${i + 1} (${e.project})`;
    if (!existsSync(join(kittehub, e.project, "autokitteh.yaml"))) {
      throw new PlanError(`${where}.project: no ${e.project}/autokitteh.yaml under ${kittehub}`);
    }
    for (const name of e.packages ?? []) {
      if (!packageDir(name)) throw new PlanError(`${where}.packages: no stand-in package ${name}`);
    }
    const names = [...new Set(e.packages ?? [])].sort();
    const proxy = e.proxy === true;
    const key = `${proxy}\n${names.join("\n")}`;
    if (!out.has(key)) out.set(key, { names, proxy, entries: [] });
    out.get(key)!.entries.push(e);
  }
  return out;
}

function failedEntry(e: Entry, err: Error): EntryResult {
  const problems = [`harness: ${err.message}`];
  const base = { fires: [], connections: [], calls: [], problems };
  return {
    project: e.project,
    verdict: "blocked",
    planned: e.verdict ?? "",
    how: e.how ?? "",
    ...base,
  };
}

function line(r: EntryResult): void {
  for (const f of r.fires) {
    const extra = [
      f.prints_missing.length ? `prints missing ${JSON.stringify(f.prints_missing)}` : "",
      f.calls_missing.length ? `calls missing ${JSON.stringify(f.calls_missing)}` : "",
      f.error ? `error: ${f.error.split("\n")[0]}` : "",
    ].filter(Boolean);
    console.log(
      `  ${f.ok ? "ok  " : "FAIL"} ${r.project}: ${f.what} -> ${f.state}${extra.length ? `; ${extra.join("; ")}` : ""}`,
    );
  }
  const ok = r.fires.filter((f) => f.ok).length;
  const planned = r.planned && r.planned !== r.verdict ? ` (plan says ${r.planned})` : "";
  const problems = r.problems.length ? `; ${r.problems.join("; ").slice(0, 400)}` : "";
  console.log(
    `${r.verdict.toUpperCase()} ${r.project}: ${ok}/${r.fires.length} fires ok${planned}${problems}`,
  );
}

const running: {
  svc?: Service;
  api?: StandIn;
  removePaths?: () => void;
  closeDiscord?: () => Promise<void>;
} = {};

async function shutdown(): Promise<void> {
  const { svc, api } = running;
  running.svc = running.api = undefined;
  api?.close();
  await svc?.close().catch(() => undefined);
  running.removePaths?.();
  await running.closeDiscord?.().catch(() => undefined);
  running.closeDiscord = undefined;
}

async function main(): Promise<number> {
  let args: Args;
  let plan: Map<string, Group>;
  try {
    args = parseArgs(process.argv.slice(2));
    plan = groups(loadPlan(args.plan, args.only), args.kittehub);
  } catch (e) {
    if (e instanceof PlanError) {
      console.error(`error: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const results: EntryResult[] = [];
  const python = await harnessPython((l) => console.error(l));
  running.api = await startStandIn(python);
  console.log(`stand-in API at ${running.api.url}`);
  await pubsubSetup(running.api);
  const discord = await startDiscord(running.api);
  running.closeDiscord = discord.close;
  for (const { names, proxy, entries } of plan.values()) {
    const { paths, remove } = await pathsFor(python, names);
    running.removePaths = remove;
    running.svc = await startService(python, paths, proxy ? running.api.url : undefined);
    console.log(
      `service at ${running.svc.url}${paths.length ? ` (path: ${paths.join(", ")})` : ""}${proxy ? " (HTTP_PROXY: the stand-in)" : ""}`,
    );
    for (const e of entries) {
      // A harness error in one entry blocks that entry, not the run.
      const r = await runEntry(running.svc, running.api, args.kittehub, e, {
        discord: discord.deliver,
      }).catch((err: Error) => failedEntry(e, err));
      results.push(r);
      line(r);
      if (args.out) writeFileSync(args.out, `${JSON.stringify(results, null, 1)}\n`);
    }
    await running.svc.close().catch(() => undefined);
    running.svc = undefined;
    remove();
  }
  const count = (v: string) => results.filter((r) => r.verdict === v).length;
  console.log(
    `${results.length} projects: ${count("runs")} runs, ${count("partly")} partly, ${count("blocked")} blocked`,
  );
  return 0;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`${signal}: stopping the service and the stand-in`);
    void shutdown().finally(() => process.exit(130));
  });
}
main()
  .then(async (code) => {
    await shutdown();
    process.exit(code);
  })
  .catch(async (e) => {
    console.error(e);
    await shutdown();
    process.exit(1);
  });
