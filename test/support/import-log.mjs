// `node --import ./import-log.mjs …`: appends every module URL the process resolves through the
// ES module loader to the file IMPORT_LOG names, one a line (test/cli-startup.test.ts).
import { register } from "node:module";

register(new URL("./import-log-hooks.mjs", import.meta.url));
