import { describe, expect, it } from "vitest";
import { sessionRecord } from "../../test/support/records.ts";
import { systemClock } from "../clock.ts";
import type { SessionContext } from "./context.ts";
import { SessionLog } from "./session-log.ts";
import { sessionStates } from "./session-states.ts";
import type { SessionWriter } from "./writer.ts";

/**
 * When a session's process may begin: `running()` returns what it must wait for (the write of
 * `running`), or nothing. A woken instance of a fleet must not begin a session another instance
 * owns by now, so there every session waits for its write, which storage refuses if so.
 */
describe("sessionStates.running", () => {
  const stored = Promise.resolve();
  const states = (fenced: boolean) =>
    sessionStates({
      here: new Map() as never,
      channel: { tell: () => {} } as never,
      writer: { fenced, persist: () => {}, written: () => stored } as unknown as SessionWriter,
      parking: {} as never,
      clock: systemClock,
      closing: () => false,
    });
  const ctx = (over: { durable?: boolean; is_sync?: boolean }) =>
    ({
      record: sessionRecord({ state: "created", ...over }),
      log: new SessionLog(),
    }) as unknown as SessionContext;

  it("alone: a durable or synchronous session begins at once, any other after its write", () => {
    const alone = states(false);
    expect(alone.running(ctx({ durable: true }))).toBeUndefined();
    expect(alone.running(ctx({ is_sync: true }))).toBeUndefined();
    expect(alone.running(ctx({}))).toBe(stored);
  });

  it("in a fleet: every session begins only after its write of running is stored", () => {
    const fleet = states(true);
    expect(fleet.running(ctx({ durable: true }))).toBe(stored);
    expect(fleet.running(ctx({ is_sync: true }))).toBe(stored);
    expect(fleet.running(ctx({}))).toBe(stored);
  });
});
