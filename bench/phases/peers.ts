import { type Bench, JSON_BODY } from "../context.ts";
import { ensurePeer, PEERS } from "../peers/install.ts";
import { startN8n } from "../peers/n8n.ts";
import { type RunningPeer, startRestate } from "../peers/restate.ts";
import { row, targetRow } from "../table.ts";

const C1 = { body: JSON_BODY, concurrency: 1, count: 300, warmup: 30, maxMs: 60_000 };
const C16 = { body: JSON_BODY, concurrency: 16, count: 800, warmup: 48, maxMs: 60_000 };

async function withPeer<T>(
  b: Bench,
  name: string,
  start: () => Promise<RunningPeer>,
  use: (p: RunningPeer) => Promise<T>,
): Promise<T | null> {
  let peer: RunningPeer;
  try {
    peer = await start();
  } catch (e) {
    b.log(`peer ${name} did not start: ${e instanceof Error ? e.message : e}`);
    b.data[`peers.${name}.error`] = String(e);
    b.rows.push(row(`${name}: not measured`, "", null, null, String(e).slice(0, 80)));
    return null;
  }
  try {
    return await use(peer);
  } finally {
    await peer.close();
  }
}

/**
 * `BENCH_PEERS=1`: the sync round trip of Restate (a plain call, and one with a durable step)
 * and of n8n (Webhook → Code → Respond) on loopback, the same load client and body, beside our
 * sync p50 from this run. Installs the peers into `bench/.peers/` on first use.
 * @example await peersPhase(b, "default storage");
 */
export async function peersPhase(b: Bench, label: string) {
  const ours = b.figures[label]?.syncP50 ?? null;
  const restateV = PEERS.restate.packages["@restatedev/restate-server"];
  const n8nV = PEERS.n8n.packages.n8n;
  const installed = (name: "restate" | "n8n") => {
    try {
      return ensurePeer(name, b.log);
    } catch (e) {
      throw new Error(`npm install of peer ${name} failed: ${e instanceof Error ? e.message : e}`);
    }
  };

  await withPeer(
    b,
    `Restate ${restateV}`,
    () => startRestate(installed("restate")),
    async (p) => {
      const call = await b.load("peers.restate.call.c1", { ...C1, url: p.urls.call! });
      const step = await b.load("peers.restate.step.c1", { ...C1, url: p.urls.step! });
      const call16 = await b.load("peers.restate.call.c16", { ...C16, url: p.urls.call! });
      const step16 = await b.load("peers.restate.step.c16", { ...C16, url: p.urls.step! });
      const name = `Restate ${restateV} call`;
      const stepName = `Restate ${restateV} invocations with one durable step, c=16`;
      b.rows.push(
        targetRow(
          "async sessions completed/s vs Restate's one-step invocations/s",
          "/s",
          b.figures[label]?.sessionsRate ?? null,
          step16.rps,
          stepName,
          { limit: 1.2, below: false, on: "ratio" },
          { text: "≥ 1.2× the peer" },
        ),
        targetRow(
          `sync p50, c=1, below ${name}`,
          "ms",
          ours,
          call.latency.p50,
          name,
          { limit: 1, below: true, on: "ratio" },
          { text: "below the peer" },
        ),
        targetRow(
          `sync p50, c=1, vs ${name}`,
          "ms",
          ours,
          call.latency.p50,
          name,
          { limit: 1 / 3, below: true, on: "ratio" },
          { text: "≥ 3× below the peer" },
        ),
        row(`  ${name} p99, c=1`, "ms", call.latency.p99, null, "–"),
        row(`  ${name} req/s, c=16`, "/s", call16.rps, null, "–"),
        row(
          `sync p50, c=1, vs Restate ${restateV} call with one durable step`,
          "ms",
          ours,
          step.latency.p50,
          `Restate ${restateV} ctx.run`,
        ),
      );
    },
  );

  await withPeer(
    b,
    `n8n ${n8nV}`,
    () => startN8n(installed("n8n")),
    async (p) => {
      const c1 = await b.load("peers.n8n.c1", { ...C1, url: p.urls.sync! });
      const c16 = await b.load("peers.n8n.c16", { ...C16, url: p.urls.sync! });
      const name = `n8n ${n8nV} Webhook → Code → Respond`;
      b.rows.push(
        targetRow(
          `sync p50, c=1, vs ${name}`,
          "ms",
          ours,
          c1.latency.p50,
          name,
          { limit: 0.1, below: true, on: "ratio" },
          { text: "≥ 10× below the peer" },
        ),
        row(`  n8n ${n8nV} p99, c=1`, "ms", c1.latency.p99, null, "–"),
        row(`  n8n ${n8nV} req/s, c=16`, "/s", c16.rps, null, "–"),
      );
    },
  );
}
