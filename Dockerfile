# The Hookline service as a container: the same Hono app as the emulator, behind a router.
# Configure with SVC_* variables (docs/configuration.md); SVC_API_TOKEN is required.
# Under podman build with `--format docker`: the OCI format has no HEALTHCHECK and drops it.
# docs/operations.md#the-container says how to build and run it, with or without a registry.

# Build stage: compile src/ and emulator/ to dist/ with the dev dependencies (TypeScript).
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY emulator ./emulator
# tsc straight into a plain dist/ folder: `npm run build` swaps a symlink in (bin/build.mjs), which
# COPY --from would not follow into the final stage.
RUN npx tsc -p tsconfig.build.json

# Production dependencies, apart so that a change in src/ reuses this layer. Optional packages
# stay: LMDB's and msgpackr's prebuilt binaries (@lmdb/lmdb-linux-x64, …) are optional
# dependencies, and without them the default storage engine cannot load. TypeScript is the one
# package here nothing needs at run time (the lockfile marks it devOptional: a dev dependency and
# valibot's optional peer), so it and its 27 MB platform binary are removed by name.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/typescript node_modules/@typescript node_modules/.bin/tsc \
    node_modules/.bin/tsserver \
 && node -e "require('lmdb'); require('msgpackr')"

# Final stage: Python, production dependencies and the compiled JavaScript; no compiler, no npm
# install, no dev package.
FROM node:20-bookworm-slim

# Debian bookworm's python3 is 3.11, the minimum the runtime supports. npm is not needed at run
# time: removed (19 MB).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/bin/npm /usr/local/bin/npx \
    /usr/local/lib/node_modules/corepack /usr/local/bin/corepack /opt/yarn* /usr/local/bin/yarn*

WORKDIR /app
COPY python-runtime ./python-runtime

# workflow_sdk goes into a venv of its own, offline; sessions run on this Python. The packages
# AutoKitteh pre-installs: baked in with --build-arg HOOKLINE_PREINSTALL=on (pip reads PIP_*
# build args, e.g. PIP_INDEX_URL), else installed at the first start into the data volume
# (/data/hookline/python, on the venv's path through a .pth file) from whatever index the
# container reaches; SVC_PREINSTALL=off skips that.
ARG HOOKLINE_PREINSTALL=off
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_FIND_LINKS
RUN python3 -m venv /opt/hookline/venv \
 && /opt/hookline/venv/bin/python -m pip install --no-index --no-build-isolation --no-deps \
    --no-cache-dir ./python-runtime \
 && echo /data/hookline/python >"$(/opt/hookline/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/hookline-data.pth" \
 && if [ "$HOOKLINE_PREINSTALL" = on ]; then \
      pip="/opt/hookline/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check"; \
      $pip -r python-runtime/preinstalled.txt || for p in $(sed 's/#.*//' python-runtime/preinstalled.txt); do \
        $pip "$p" >/dev/null 2>&1 || echo "HOOKLINE_PREINSTALL: pre-installed package \"$p\" not installed: pip failed"; \
      done; \
    fi \
 && find /opt/hookline/venv -name __pycache__ -prune -exec rm -rf {} + \
 && mkdir -p /data && chown node:node /data

COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist

# Sessions at SCHED_IDLE: in the container's own cgroup they yield the CPU to the service alone, so
# webhooks are answered first (docs/limits.md, "CPU priority").
ENV SVC_MODE=prod \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8080 \
    SVC_WORKER_PYTHON=/opt/hookline/venv/bin/python \
    SVC_SESSION_PRIORITY=idle \
    SVC_PREINSTALL_BAKED=${HOOKLINE_PREINSTALL} \
    XDG_DATA_HOME=/data \
    XDG_CONFIG_HOME=/data/config \
    NODE_ENV=production

USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "fetch('http://127.0.0.1:'+(process.env.SVC_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/container.mjs"]
