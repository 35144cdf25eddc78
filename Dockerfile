# syntax=docker/dockerfile:1
# Pressroom's container images: one target per service, built from Debian packages only.
#
#   podman build --target gateway --build-arg SERVICE=gateway -t pressroom/gateway:0.1.0 .   (deploy/images.sh builds all six)
#
# Stages: `build` installs every workspace with its dev dependencies and builds the services and
# what they use (buf, tsc, turbo); `deps` installs the services' production dependencies alone; `runtime` is Debian's nodejs with tini; `app` adds
# /app's shared part (node_modules, packages/*/dist); `service` adds one service's folder (build argument
# SERVICE), and each service target is that image with its description.
# The npm steps take an optional build secret `extra-ca` (a PEM bundle) for a TLS-inspecting
# proxy in front of the registry, and the usual proxy variables as build arguments.

ARG BASE_IMAGE=docker.io/library/debian:trixie-slim

FROM ${BASE_IMAGE} AS node
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs ca-certificates tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

FROM node AS npm
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
ENV NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false NPM_CONFIG_UPDATE_NOTIFIER=false \
    TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
ARG HTTP_PROXY HTTPS_PROXY NO_PROXY
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/admin/package.json packages/admin/
COPY packages/client/package.json packages/client/
COPY packages/contracts/package.json packages/contracts/
COPY packages/domain/package.json packages/domain/
COPY packages/platform/package.json packages/platform/
COPY packages/stack/package.json packages/stack/
COPY services/gateway/package.json services/gateway/
COPY services/identity/package.json services/identity/
COPY services/metering/package.json services/metering/
COPY services/render/package.json services/render/
COPY services/storage/package.json services/storage/
COPY services/webhook/package.json services/webhook/
COPY test/package.json test/
COPY bench/package.json bench/

# Every workspace with its dev dependencies, then the whole build (buf generate, tsc).
FROM npm AS build
RUN --mount=type=secret,id=extra-ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi; \
    npm install --no-save --loglevel=error
COPY tsconfig.base.json turbo.json ./
COPY proto proto
COPY packages packages
COPY services services
RUN npx turbo run build --filter='./services/*' --filter=@pressroom/admin --output-logs=errors-only

# Production dependencies of the services, the platform kit, the domain, the contracts and the operator
# CLI only: no buf, typescript, tsx, eslint or turbo, and nothing of the tests or benchmarks.
FROM npm AS deps
RUN --mount=type=secret,id=extra-ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi; \
    npm install --no-save --omit=dev --loglevel=error \
      -w packages/contracts -w packages/platform -w packages/domain -w packages/admin \
      -w services/gateway -w services/identity -w services/metering \
      -w services/render -w services/storage -w services/webhook \
 && mkdir -p packages/contracts/node_modules packages/platform/node_modules packages/domain/node_modules packages/admin/node_modules \
      services/gateway/node_modules services/identity/node_modules services/metering/node_modules \
      services/render/node_modules services/storage/node_modules services/webhook/node_modules

FROM node AS runtime
LABEL org.opencontainers.image.vendor="Pressroom" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.base.name="docker.io/library/debian:trixie-slim"
RUN groupadd --gid 10001 pressroom && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin pressroom
# HOME is /tmp, the one writable place: Chromium and fontconfig keep their caches under it.
ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps HOME=/tmp
# tini is PID 1: it forwards SIGTERM to node and reaps what node's children leave behind
# (Chromium's helpers, when the render service's browser dies).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--require", "@pressroom/platform/telemetry", "dist/main.js"]
USER 10001:10001

FROM runtime AS chromium
USER root
# The same fonts as scripts/setup.sh: Liberation (metric-compatible with Arial, Times, Courier),
# Noto CJK and Noto Color Emoji; qpdf and Ghostscript (with its sRGB profile) for the worker's PDF
# post-processing: merge, AES-256 encryption, PDF/A.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium-headless-shell fontconfig fonts-liberation2 fonts-noto-cjk fonts-noto-color-emoji qpdf ghostscript \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
USER 10001:10001

# /app's part every service shares. Root owns it all; the services only read it.
FROM scratch AS app
COPY --from=deps /src/package.json /app/package.json
COPY --from=deps /src/node_modules /app/node_modules
COPY --from=build /src/packages/contracts/package.json /app/packages/contracts/package.json
COPY --from=build /src/packages/contracts/dist /app/packages/contracts/dist
COPY --from=deps /src/packages/contracts/node_modules /app/packages/contracts/node_modules
COPY --from=build /src/packages/platform/package.json /app/packages/platform/package.json
COPY --from=build /src/packages/platform/dist /app/packages/platform/dist
COPY --from=deps /src/packages/platform/node_modules /app/packages/platform/node_modules
COPY --from=build /src/packages/domain/package.json /app/packages/domain/package.json
COPY --from=build /src/packages/domain/dist /app/packages/domain/dist
COPY --from=deps /src/packages/domain/node_modules /app/packages/domain/node_modules
COPY --from=build /src/packages/admin/package.json /app/packages/admin/package.json
COPY --from=build /src/packages/admin/dist /app/packages/admin/dist
COPY --from=deps /src/packages/admin/node_modules /app/packages/admin/node_modules

# One service's /app: the shared part and the service's own folder, for SERVICE (deploy/images.sh
# passes the target's name: --target gateway --build-arg SERVICE=gateway).
FROM runtime AS service
ARG SERVICE
COPY --from=app /app /app
# From deps, the service's package.json and node_modules together: podman's layer cache keys a COPY
# by its text before SERVICE is put in and by the files it copies, so an empty node_modules copied
# alone would be one cached layer for every service, under the first one's path.
COPY --from=deps /src/services/${SERVICE} /app/services/${SERVICE}
COPY --from=build /src/services/${SERVICE}/dist /app/services/${SERVICE}/dist
WORKDIR /app/services/${SERVICE}
LABEL org.opencontainers.image.title="pressroom-${SERVICE}"

# The service targets: the image above with its description; render's has Chromium underneath.
FROM service AS gateway
LABEL org.opencontainers.image.description="Pressroom's public HTTP API"

FROM service AS identity
LABEL org.opencontainers.image.description="Pressroom's API keys, plans and webhook secrets"

FROM service AS metering
LABEL org.opencontainers.image.description="Pressroom's rate limits, quotas, concurrency slots, usage and billing"

FROM service AS storage
LABEL org.opencontainers.image.description="Pressroom's output store and signed URLs"

FROM service AS webhook
LABEL org.opencontainers.image.description="Pressroom's signed webhook delivery"

FROM chromium AS render
COPY --from=service /app /app
WORKDIR /app/services/render
LABEL org.opencontainers.image.title="pressroom-render" \
      org.opencontainers.image.description="Pressroom's template catalog and Chromium render pool"
