#!/usr/bin/env node
// Container entry point (see Dockerfile): the service, configured from SVC_* variables.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/platform/container.ts");
await main();
