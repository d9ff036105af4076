#!/usr/bin/env node
// The `cli` / `hookline` command. TypeScript sources run through tsx's loader, so a clone works
// after `npm install` with no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../emulator/cli.ts");
await main(process.argv.slice(2));
