import { describe, expect, it } from "vitest";
import { decodedLength, MAX_APART_BYTES, MAX_OPEN_VALUES, PartsInbox } from "./parts.ts";

const b64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");

describe("a session's parts of values kept apart", () => {
  it("hands a value's parts over in order once its step says how many and how big", () => {
    const inbox = new PartsInbox();
    expect(inbox.add(3, b64(5))).toBeUndefined();
    expect(inbox.add(4, b64(1))).toBeUndefined(); // another activity's, in between
    expect(inbox.add(3, b64(4))).toBeUndefined();
    expect(inbox.take(3, { field: "result", parts: 2, bytes: 9 })).toEqual({
      parts: [b64(5), b64(4)],
    });
    expect(inbox.take(4, { field: "error", parts: 1, bytes: 1 })).toEqual({ parts: [b64(1)] });
  });

  it("refuses a step whose parts did not all come", () => {
    const inbox = new PartsInbox();
    inbox.add(0, b64(3));
    expect(inbox.take(0, { field: "result", parts: 2, bytes: 6 })).toEqual({
      violation: "step 0 says 2 parts of 6 bytes apart, but 1 parts, 3 bytes came",
    });
    expect(inbox.take(1, { field: "result", parts: 1, bytes: 1 })).toEqual({
      violation: "step 1 says 1 parts of 1 bytes apart, but no parts came",
    });
  });

  it("refuses a value past 64 MiB, and more values at once than the activity pool runs", () => {
    const inbox = new PartsInbox();
    const mib = b64(1024 * 1024);
    for (let i = 0; i < 64; i++) expect(inbox.add(0, mib)).toBeUndefined();
    expect(inbox.add(0, b64(1))).toBe(
      `the value of step 0 is over ${MAX_APART_BYTES} bytes (64 MiB), the most a journaled value may hold`,
    );
    for (let seq = 1; seq <= MAX_OPEN_VALUES; seq++) expect(inbox.add(seq, "AA==")).toBeUndefined();
    expect(inbox.add(99, "AA==")).toBe(`parts of more than ${MAX_OPEN_VALUES} values at once`);
  });

  it("counts the bytes of padded base64", () => {
    for (const n of [0, 1, 2, 3, 4, 1000]) expect(decodedLength(b64(n))).toBe(n);
  });
});
