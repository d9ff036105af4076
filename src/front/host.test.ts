import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { threadLife } from "./host.ts";

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

afterEach(() => vi.restoreAllMocks());

/** A thread as the host sees it: an emitter of `exit`, `error` and messages. */
function thread() {
  const worker = new EventEmitter();
  const life = threadLife(worker as never, quiet);
  return { worker, life };
}

describe("the front door's thread, as the host sees it", () => {
  it("stops the service when the thread ends while it serves: nothing would listen", async () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => true);
    const { worker, life } = thread();
    life.heard({ t: "listening", port: 1234 });
    expect(await life.listening).toBe(1234);
    worker.emit("exit", 1);
    expect(kill).toHaveBeenCalledWith(process.pid, "SIGTERM");
  });

  it("lets the thread end when the host ends it (a stop, a start that failed), and answers its waits", async () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => true);
    const { worker, life } = thread();
    const refused = life.listening.catch((e: Error) => e.message);
    life.ending();
    const closed = life.closed();
    worker.emit("exit", 0);
    await closed;
    expect(await refused).toBe("the front door's thread exited before it listened");
    expect(await life.closed()).toBeUndefined(); // asked after the exit: at once
    expect(kill).not.toHaveBeenCalled();
  });
});
