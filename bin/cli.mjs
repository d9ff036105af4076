#!/usr/bin/env node
// The `cli` / `hookline` command: runs the compiled JavaScript in dist/ (`npm run build`, which
// `npm install` runs through `prepare`). Sources run as TypeScript only in the tests (vitest)
// and the bench (tsx).
import { existsSync } from "node:fs";

const entry = new URL("../dist/emulator/cli.js", import.meta.url);
if (!existsSync(entry)) {
  console.error("error: dist/ is missing: run `npm run build` (npm install runs it too)");
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv.slice(2));
