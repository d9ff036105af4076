import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Encrypts secret var values at rest with AES-256-GCM. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const VERSION = "v1";

/**
 * Equal in constant time, for every comparison with a secret (a token, a signature, a MAC):
 * both sides are hashed first, so neither their lengths nor a common prefix shows in the time
 * taken.
 * @example sameSecret("sha256=ab", "sha256=ab") // true
 */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * A box over a 32-byte key.
 * @example const box = createSecretBox(randomBytes(32)); box.open(box.seal("s")) // "s"
 */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error("secret key must be 32 bytes");
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString("base64"), tag.toString("base64"), ct.toString("base64")].join(
        ":",
      );
    },
    open(sealed) {
      const [version, iv, tag, ct] = sealed.split(":");
      if (version !== VERSION || !iv || !tag || ct === undefined) {
        throw new Error("sealed secret is malformed");
      }
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}

/**
 * The key from `SVC_SECRET_KEY` (64 hex chars or base64 of 32 bytes), else `<configHome>/secret.key`,
 * made (mode 0600) on first use. Every instance sharing a store must share the key.
 */
export function loadSecretKey(configHome: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const given = env.SVC_SECRET_KEY;
  if (given) {
    const key = /^[0-9a-f]{64}$/i.test(given)
      ? Buffer.from(given, "hex")
      : Buffer.from(given, "base64");
    if (key.length !== 32) throw new Error("SVC_SECRET_KEY must hold 32 bytes (hex or base64)");
    return key;
  }
  const file = join(configHome, "secret.key");
  try {
    return Buffer.from(readFileSync(file, "utf8").trim(), "hex");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  mkdirSync(configHome, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString("hex"), { mode: 0o600, flag: "wx" });
    return key;
  } catch (e) {
    // Another process made it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      return Buffer.from(readFileSync(file, "utf8").trim(), "hex");
    }
    throw e;
  }
}

export const MASK = "********";
