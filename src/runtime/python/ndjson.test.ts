import { describe, expect, it } from "vitest";
import { encodeLine, LineSplitter } from "./ndjson.ts";

function collect(max = 64) {
  const lines: string[] = [];
  let overflows = 0;
  const splitter = new LineSplitter(
    max,
    (l) => lines.push(l),
    () => overflows++,
  );
  return { splitter, lines, overflows: () => overflows };
}

describe("LineSplitter", () => {
  it("splits lines across chunks and skips blank ones", () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('{"a":1}\n{"b"'));
    splitter.push(Buffer.from(':2}\n\n{"c":3}\n{"d"'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(splitter.pendingBytes).toBe(4);
  });

  it("decodes a multi-byte character cut between chunks", () => {
    const { splitter, lines } = collect();
    const bytes = Buffer.from('"é€😀"\n');
    for (let i = 0; i < bytes.length; i++) splitter.push(bytes.subarray(i, i + 1));
    expect(lines).toEqual(['"é€😀"']);
  });

  it("reports an overlong line once and drops what follows", () => {
    const { splitter, lines, overflows } = collect(10);
    splitter.push(Buffer.from("0123456789\n"));
    splitter.push(Buffer.from("0123456"));
    splitter.push(Buffer.from("789A"));
    splitter.push(Buffer.from("\nok\n"));
    expect(lines).toEqual(["0123456789"]);
    expect(overflows()).toBe(1);
  });

  it("encodes one message per line", () => {
    expect(encodeLine({ type: "stop" })).toBe('{"type":"stop"}\n');
  });
});
