# The service's container image: compiled JavaScript on Node 24 LTS, production dependencies only, as a
# non-root user. Config and keys come from mounted files (/app/config, /app/keys) or from the environment
# (${VAR} in the config; PORT, BASE_URL, CONFIG).
#   docker build -t vc-oidc-provider .
#   docker run -p 3000:3000 vc-oidc-provider          # the demo, memory store: http://localhost:3000/demo
# The demo (config/demo.yaml) publishes its secrets and its PID issuer signs whatever a visitor asks: the log
# warns that it listens on every interface, and a BASE_URL that is not this machine is refused unless
#   docker run -p 3000:3000 -e BASE_URL=https://demo.example.net -e DEMO_ON_PUBLIC_URL=true vc-oidc-provider
# says so (a shared test machine, never production: mount your own config with CONFIG=...).
# BASE is any image with Node 24 and npm: by default the official one, the tag pinned by its digest (a
# rebuild gets the same bytes; docs/operations.md, "Refreshing the base image"); tests build on a local one.
ARG BASE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/
COPY src src
# compile, then drop the TypeScript tooling (tsx, esbuild, typescript) and every test library
RUN npm run build && npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM ${BASE}
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin vc \
 && mkdir keys && chown vc keys
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY locales locales
COPY config config
USER vc
EXPOSE 3000
# /healthz answers while the process serves; /readyz (the store) is for the load balancer
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
