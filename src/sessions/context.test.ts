import { describe, expect, it } from "vitest";
import { frontGate } from "../front/gate.ts";
import { type SessionContext, SessionsHere } from "./context.ts";

const session = (id: string) => ({ record: { id } }) as SessionContext;

describe("the sessions here", () => {
  it("count the sessions the front door committed on their way here against the bound, and tell it theirs", () => {
    const gate = frontGate(3);
    const here = new SessionsHere(3, gate);
    here.add(session("ses_1"));
    expect(gate.reserve()).toBe(true); // the front's: 1 here, 1 arriving
    expect(here.hasRoom()).toBe(true);
    expect(gate.reserve()).toBe(true);
    expect(here.hasRoom()).toBe(false); // 1 here + 2 arriving
    here.delete("ses_1");
    expect(here.hasRoom()).toBe(true);
    expect(gate.reserve()).toBe(true); // the host said it holds none now
    expect(gate.reserve()).toBe(false);
  });
});
