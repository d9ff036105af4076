import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox, sameSecret } from "./secrets.ts";

describe("sameSecret", () => {
  it("is true only for the same text: a shared prefix, a longer or a shorter one are not it", () => {
    const sig = `sha256=${"ab12".repeat(16)}`;
    expect(sameSecret(sig, sig)).toBe(true);
    expect(sameSecret(sig, `${sig.slice(0, -1)}0`)).toBe(false);
    expect(sameSecret(sig.slice(0, 15), sig)).toBe(false);
    expect(sameSecret(sig, `${sig}0`)).toBe(false);
    expect(sameSecret("", "")).toBe(true);
    expect(sameSecret("", "x")).toBe(false);
  });
});

describe("createSecretBox", () => {
  it("opens what it sealed, and refuses what another key sealed", () => {
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal("s3cret");
    expect(sealed).not.toContain("s3cret");
    expect(box.open(sealed)).toBe("s3cret");
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});
