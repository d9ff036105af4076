import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";

/**
 * A session made by `start()` signals its parent when it ends, as AutoKitteh does: the signal is
 * named by the child's session id, its payload `{'completed': True, 'value': <return value>}`
 * or `{'completed': False}`. AutoKitteh's own tests ping_pong and parent_child_signal, through
 * the real service and real Python; durable parents are parked while they wait (evictAfterMs 0).
 */
const FIXTURE = join(import.meta.dirname, "fixtures", "child-signal");

describe("a child session's end signals its parent", () => {
  const emu = useEmulator({ evictAfterMs: 0 });
  let urls: Record<string, string> | undefined;
  const run = async (trigger: string) => {
    urls ??= await emu.deploy(FIXTURE);
    const res = await fetch(urls[trigger]!, { method: "POST" });
    const { session_id } = (await res.json()) as { session_id: string };
    const record = await emu.ended(session_id);
    return { record, prints: await emu.prints(session_id) };
  };

  it("ping_pong: the parent's wait on the child's id ends with its return value", async () => {
    const { record, prints } = await run("ping_pong");
    expect(record.state).toBe("completed");
    expect(prints).toEqual([
      "1",
      "2",
      "3",
      "4",
      "player2 ended: {'completed': True, 'value': 'game over'}",
    ]);
  });

  for (const trigger of ["parent_child", "parent_child_nd"]) {
    it(`parent_child_signal: completed with its value, failed, not yet, any value (${trigger})`, async () => {
      const { record, prints } = await run(trigger);
      expect(record.state, record.error?.message).toBe("completed");
      expect(prints).toEqual([
        "{'completed': True, 'value': 2}",
        "{'completed': False}",
        "None",
        "{'completed': True, 'value': None}",
        "{'completed': True, 'value': {'items': (1, 2), 'big': 1180591620717411303424}}",
        "{'completed': True, 'value': None}",
        "{'completed': True, 'value': None}",
      ]);
    });
  }
});
