# textdetect detection service: `docker build -t textdetect .` then
#   docker run --rm -p 8080:8080 -v textdetect-keys:/data textdetect
# A sandbox key is created on first start and printed in `docker logs` (stderr).
# For production: --env-file .env with ENVIRONMENT=production and a key file made with
#   docker run --rm -v textdetect-keys:/data textdetect node bin/textdetect.mjs keys create --env production --name NAME

# ---- build: install every dependency (patch-package is a dev dependency and runs on install),
# then drop the dev ones.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# ---- runtime: the sources run through tsx (a runtime dependency), as with `npm start`.
FROM node:22-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    API_KEYS_FILE=/data/api-keys.json
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
COPY models ./models
# /data holds the key file; it belongs to the unprivileged user the service runs as.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness through the service's own probe; node is in the image, curl is not.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1 (no npm wrapper), so SIGTERM from `docker stop` reaches the graceful shutdown.
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "src/service/main.ts"]
