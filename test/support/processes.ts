// Counting the Python processes of the service a test started, and only those: other test
// files (and other checkouts on a shared machine) run fork servers of their own at the same time.
import { execFileSync } from "node:child_process";

/** The pids pgrep finds; none when nothing matches. */
export function pgrep(...args: string[]): number[] {
  try {
    return execFileSync("pgrep", args, { encoding: "utf8" }).trim().split("\n").map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/**
 * The fork servers of the service this test process runs in-process (`useEmulator`): children of
 * this process.
 * @example const [server] = forkServers();
 */
export function forkServers(): number[] {
  return pgrep("-P", String(process.pid), "-f", "workflow_sdk.runner serve");
}

/**
 * The processes those fork servers forked right now: sessions, spares, the one connected ahead.
 * Throws when this process runs no fork server, so that "none" can never pass for "few".
 * @example await until("the processes to go", () => forkedProcesses() < 40);
 */
export function forkedProcesses(): number {
  const servers = forkServers();
  if (servers.length === 0) throw new Error(`no fork server runs under pid ${process.pid}`);
  return servers.reduce((n, server) => n + pgrep("-P", String(server)).length, 0);
}
