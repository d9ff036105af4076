// The loader hook of import-log.mjs (it runs on the loader's thread).
import { appendFileSync } from "node:fs";

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.IMPORT_LOG, `${resolved.url}\n`);
  return resolved;
}
