# textdetect: one image for the detection service and both bots (docs/build.md, "Docker").
#   docker build -t textdetect .
#   docker run --rm -p 8080:8080 -v textdetect-keys:/data textdetect            # the service
#   docker run --rm --env-file .env -p 3000:3000 textdetect slack               # the Slack app
#   docker run --rm --env-file .env textdetect discord                          # the Discord bot
#   docker run --rm -v textdetect-keys:/data textdetect keys create --env production --name NAME
# `docker run --rm textdetect --help` lists the roles. compose.yaml runs Redis, the service and both bots.
#
# What a build needs (docs/build.md, "What a build needs"): the base image NODE_IMAGE (node:22-slim from
# Docker Hub by default), and the npm registry or a mirror of it for `npm ci` in the build stage; the
# runtime stage needs no network. Without Docker Hub, name a Node 22 image already on the machine:
#   podman load -i node-22-slim.tar && podman build --pull=never --build-arg NODE_IMAGE=docker.io/library/node:22-slim -t textdetect .
#   docker build --build-arg NODE_IMAGE=my-registry.local/node:22-slim -t textdetect .
# Without registry.npmjs.org, a mirror, and its credentials (or any npm setting) as a build secret,
# read by that one step and kept in no layer (BuildKit, the default since Docker 23, or podman):
#   docker build --build-arg NPM_REGISTRY=https://npm.example.internal/ --secret id=npmrc,src=$HOME/.npmrc -t textdetect .
ARG NODE_IMAGE=node:22-slim

# ---- build: every dependency (TypeScript), compile to dist/, then drop the dev dependencies
# (tsx, TypeScript, vitest, the training corpus) so only what runs is copied on.
FROM ${NODE_IMAGE} AS build
# Empty: the registry npm is configured with (registry.npmjs.org, or the npmrc secret's).
ARG NPM_REGISTRY=
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are here; the build runs below.
# The npmrc secret is optional: without it the file is absent and npm reads nothing from it.
RUN --mount=type=secret,id=npmrc,target=/run/secrets/npmrc \
    npm_config_userconfig=/run/secrets/npmrc \
    npm ci --ignore-scripts --no-audit --no-fund ${NPM_REGISTRY:+--registry=$NPM_REGISTRY}
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/build.mjs
COPY src ./src
COPY adapters ./adapters
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# ---- runtime: compiled JavaScript on plain node; no TypeScript loader, no sources, no tests.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    API_KEYS_FILE=/data/api-keys.json
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY models/detector.bin ./models/detector.bin
COPY models/author.json ./models/author.json
COPY models/segments.json ./models/segments.json
COPY docker/entrypoint.mjs ./docker/entrypoint.mjs
# /data holds the key file; it belongs to the unprivileged user the processes run as.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 8080: the service; 3000: the Slack app's HTTP receiver (not needed in Socket Mode).
EXPOSE 8080 3000
# Liveness of the service role through its own probe (node is in the image, curl is not). The bots
# have no HTTP probe of their own: compose.yaml turns this check off for them.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1 (the entrypoint imports the role, no npm or shell wrapper), so SIGTERM from
# `docker stop` reaches the graceful shutdown.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "docker/entrypoint.mjs"]
CMD ["service"]
