import { localBus } from "../../src/cluster/bus.ts";
import type { Cluster, Owners } from "../../src/cluster/cluster.ts";
import type { StoredParts } from "../../src/cluster/pg-coordinator.ts";

/**
 * A fleet of one in process, for the session core's unit tests: PostgreSQL's coordinator
 * (src/cluster/pg-coordinator.ts) stood in by a map of owned sessions and a list of queued ones,
 * its bus in process. `steps` notes what the core asked of it (`take ses_1`, `requeue ses_1`…);
 * what another instance would send, the test sends on `bus`. Its store-side checks (the fence in
 * the write) are not here: src/cluster/pg-coordinator.test.ts runs those on a real PostgreSQL.
 * @example const c = fakeFleet(); const f = await sessionsFixture({}, { cluster: c.cluster });
 */
export function fakeFleet() {
  const held = new Map<string, number>();
  const queue: string[] = [];
  const steps: string[] = [];
  const served = {
    free: () => false,
    run: (_taken: { id: string; epoch: number; stored?: StoredParts }) => {},
  };
  const owners: Owners = {
    owner: "me.0",
    create(id) {
      held.set(id, 1);
      steps.push(`own ${id}`);
      return { session: id, kind: "own", owner: "me.0" };
    },
    enqueue(id) {
      queue.push(id);
      steps.push(`enqueue ${id}`);
      return { session: id, kind: "queue" };
    },
    write(id, release = false) {
      const epoch = held.get(id);
      return epoch === undefined
        ? undefined
        : { session: id, kind: "fence", owner: "me.0", epoch, release };
    },
    holds: (id) => held.has(id),
    forget: (id) => void held.delete(id),
    fenced: (id) => void held.delete(id),
    async requeue(id) {
      if (!held.delete(id)) return;
      steps.push(`requeue ${id}`);
      queue.push(id);
    },
    async release(id) {
      if (held.delete(id)) steps.push(`release ${id}`);
    },
    async takeQueued(id) {
      const at = queue.indexOf(id);
      if (at < 0) return false;
      queue.splice(at, 1);
      held.set(id, 2);
      steps.push(`take ${id}`);
      return true;
    },
    queued: async () => queue.length,
    serve(free, run) {
      served.free = free;
      served.run = run;
    },
    poke: () => {},
  };
  const bus = localBus();
  const cluster: Cluster = {
    shared: true,
    instanceId: "me",
    bus,
    owners,
    once: async () => true,
    dispose: async () => {},
  };
  /** Takes what is queued while the instance has room, as its coordinator's loop would. */
  const pump = () => {
    while (queue.length > 0 && served.free()) {
      const id = queue.shift()!;
      held.set(id, 2);
      steps.push(`take ${id}`);
      served.run({ id, epoch: 2 });
    }
  };
  return { cluster, owners, bus, held, queue, steps, served, pump };
}
