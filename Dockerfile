# The Hookline service as a container: the same Hono app as the emulator, behind a router.
# Configure with SVC_* variables (docs/configuration.md); SVC_API_TOKEN is required.

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

# Final stage: production dependencies and the compiled JavaScript only.
FROM node:20-bookworm-slim

# Debian bookworm's python3 is 3.11, the minimum the runtime supports.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds, which needs the dev dependencies; dist/ comes from the build
# stage. --omit=optional: valibot's optional peer TypeScript would otherwise bring its 27 MB
# platform binary (the only optional packages outside the dev tree).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY python-runtime ./python-runtime

# workflow_sdk goes into a venv of its own, offline; sessions run on this Python.
RUN python3 -m venv /opt/hookline/venv \
 && /opt/hookline/venv/bin/python -m pip install --no-index --no-build-isolation --no-deps ./python-runtime \
 && mkdir -p /data && chown node:node /data

# Sessions at SCHED_IDLE: in the container's own cgroup they yield the CPU to the service alone, so
# webhooks are answered first (docs/limits.md, "CPU priority").
ENV SVC_MODE=prod \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8080 \
    SVC_WORKER_PYTHON=/opt/hookline/venv/bin/python \
    SVC_SESSION_PRIORITY=idle \
    XDG_DATA_HOME=/data \
    XDG_CONFIG_HOME=/data/config \
    NODE_ENV=production

USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "bin/container.mjs"]
