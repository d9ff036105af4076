export { checkBuild, materializeBuild, safePath } from "./builds.ts";
export { ForkServer, type ForkServerOptions } from "./fork-server.ts";
export { installRequirements } from "./pip.ts";
export { checkWorkerPython, MIN_PYTHON, sdkVersion } from "./python.ts";
export { createPythonRuntime, type PythonRuntime, type PythonRuntimeOptions } from "./runtime.ts";
export { type ChannelOptions, SessionChannel } from "./session-channel.ts";
export { ensureVenv, type VenvOptions } from "./venv.ts";
