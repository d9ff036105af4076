#!/usr/bin/env node
// Container entry point (see Dockerfile): the service, configured from SVC_* variables. Runs the
// compiled JavaScript in dist/ (the Dockerfile's build stage makes it).
import { existsSync } from "node:fs";

const entry = new URL("../dist/src/platform/container.js", import.meta.url);
if (!existsSync(entry)) {
  console.error("error: dist/ is missing: run `npm run build`");
  process.exit(1);
}
const { main } = await import(entry.href);
await main();
