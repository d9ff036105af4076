// Every comparison with a secret, a signature or a token goes through `sameSecret` (constant
// time, src/secrets.ts). Behaviour cannot show a `!==` on a signature (it answers the same, only
// faster for a wrong first byte), so this reads the sources, beside test/layers.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./support/python.ts";

/** A name that holds (or is computed from) a secret: an operand so named is compared as one. */
const SECRET_NAME =
  /secret|signature|^sig$|^(expected|given)?sig$|token|^mac$|hmac|digest|hash|cookie|password|api_?key|csrf|nonce|verifier|credential/i;

/**
 * Comparisons the check finds that compare no secret, each with the reason, as
 * `<file>: <left> <op> <right>`. A listed one that is no longer found fails too.
 */
const NOT_SECRETS = new Map<string, string>([
  [
    "src/manifest/plan.ts: spec.secret !== rec.secret",
    "`secret` is a var's flag (a boolean), not its value",
  ],
  [
    'src/connections/telegram-webhooks.ts: vars("BotID") === botIdOf(token)',
    "a bot's id (the public part of its token, before the colon), which getMe tells anyone",
  ],
  [
    "src/platform/google-watches.ts: name === names.token",
    "var names: is this var the one holding the channel token (to seal it)",
  ],
]);

/** The one file allowed to compare bytes of secrets itself: it defines `sameSecret`. */
const SAME_SECRET_HOME = "src/secrets.ts";

const OPERAND_BEFORE = /([\w$.?!\][]+(?:\([^()]*\))?(?:\.[\w$]+(?:\([^()]*\))?)*)\s*$/;
const OPERAND_AFTER =
  /^\s*((?:typeof\s+)?[\w$."'`!\][]+(?:\([^()]*\))?(?:\.[\w$]+(?:\([^()]*\))?)*)/;

/** An operand that is a literal, a type test or a size: comparing it shows nothing of a secret. */
const harmless = (operand: string, before: string) =>
  /^(["'`].*|\d.*|null|undefined|true|false|)$/.test(operand) ||
  /\.(length|size|byteLength)$/.test(operand) ||
  /^typeof\b/.test(operand) ||
  /\btypeof\s*$/.test(before);

const names = (operand: string) => operand.split(/[^\w$]+/).filter(Boolean);

/** The code of a TypeScript file without its comments (strings kept; a `//` in one ends it). */
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/\/\/.*$/gm, "");

/**
 * The comparisons of secrets in `text` (file `file`) not made by `sameSecret`, as
 * `<file>: <left> <op> <right>` with the line: `===`/`!==`/`==`/`!=` with a secret-named
 * operand, and `timingSafeEqual`, `Buffer.compare` or `.equals(` outside SAME_SECRET_HOME.
 * @example findings("a.ts", "if (sig !== expected) x();") // ["a.ts: sig !== expected (line 1)"]
 */
function findings(file: string, text: string): string[] {
  const code = withoutComments(text);
  const lineOf = (at: number) => code.slice(0, at).split("\n").length;
  const found: string[] = [];
  for (const m of code.matchAll(/[!=]==?/g)) {
    const at = m.index;
    if (code[at - 1] === "<" || code[at - 1] === ">" || code[at - 1] === "=") continue;
    if (code[at + m[0].length] === ">") continue; // an arrow
    const before = code.slice(Math.max(0, at - 400), at);
    const after = code.slice(at + m[0].length, at + m[0].length + 400);
    const left = OPERAND_BEFORE.exec(before)?.[1] ?? "";
    const right = OPERAND_AFTER.exec(after)?.[1] ?? "";
    const trimmed = before.trimEnd();
    const beforeLeft = trimmed.slice(0, trimmed.length - left.length);
    if (harmless(left, beforeLeft) || harmless(right, "")) continue;
    if (![...names(left), ...names(right)].some((n) => SECRET_NAME.test(n))) continue;
    const key = `${file}: ${left.replace(/^!/, "")} ${m[0]} ${right}`;
    if (!NOT_SECRETS.has(key)) found.push(`${key} (line ${lineOf(at)})`);
    else used.add(key);
  }
  if (file !== SAME_SECRET_HOME) {
    for (const m of code.matchAll(/\btimingSafeEqual\s*\(/g)) {
      found.push(`${file}: timingSafeEqual (line ${lineOf(m.index)})`);
    }
    // Byte comparisons: flagged when what is compared is named as a secret.
    for (const m of code.matchAll(
      /\bBuffer\.compare\s*\(([^;]*)|([\w$.?\])]+)\.equals\s*\(([^;]*)/g,
    )) {
      const compared = `${m[1] ?? ""} ${m[2] ?? ""} ${m[3] ?? ""}`;
      if (names(compared).some((n) => SECRET_NAME.test(n))) {
        found.push(`${file}: ${m[0].split("(")[0]} (line ${lineOf(m.index)})`);
      }
    }
  }
  return found;
}
const used = new Set<string>();

const sources = readdirSync(join(repoRoot, "src"), { recursive: true, encoding: "utf8" })
  .filter((p) => /\.tsx?$/.test(p) && !/\.test\.tsx?$/.test(p))
  .map((p) => `src/${p}`)
  .sort();

describe("comparisons of secrets", () => {
  it("the check finds the ways a secret is compared by hand", () => {
    const planted = [
      "if (!BASE64URL.test(signature) || signature !== expected) return 'no';",
      "return sig.slice(0, 8) === mac(apiToken, what).slice(0, 8);",
      "const ok = given ==\n  hmac(secret, body).toString('hex');",
      "if (rec.browser != browserHash(cookie)) x();",
      "return timingSafeEqual(Buffer.from(a), Buffer.from(b));",
      "return expectedDigest.equals(got);",
    ];
    for (const line of planted)
      expect([line, findings("src/x.ts", line).length]).toEqual([line, 1]);
    const fine = [
      "if (parts.length !== 3) return;",
      'if (header.alg !== "HS256") return;',
      'if (typeof token !== "string") return;',
      "if (token === undefined || secret === null) return;",
      "if (!sameSecret(signature, expected)) return;",
      "if (a.kind === b.kind) return;",
    ];
    for (const line of fine) expect([line, findings("src/x.ts", line)]).toEqual([line, []]);
  });

  it("every comparison of a secret, signature or token in src/ goes through sameSecret", () => {
    const all = sources.flatMap((f) => findings(f, readFileSync(join(repoRoot, f), "utf8")));
    expect(all).toEqual([]);
    expect([...NOT_SECRETS.keys()].filter((k) => !used.has(k))).toEqual([]);
  });
});
