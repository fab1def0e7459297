#!/bin/sh
# Cloudron's addons to castsync's settings (docs/configuration.md): its PostgreSQL, its address, and its
# OpenID Connect provider for sign-in (every Cloudron user may sign in; a castsync user is made for them).
set -eu
export DATABASE_URL="$CLOUDRON_POSTGRESQL_URL"
export PUBLIC_URL="$CLOUDRON_APP_ORIGIN"
export TRUST_PROXY=true
if [ -n "${CLOUDRON_OIDC_ISSUER:-}" ]; then
  export OIDC_ISSUER="$CLOUDRON_OIDC_ISSUER"
  export OIDC_CLIENT_ID="$CLOUDRON_OIDC_CLIENT_ID"
  export OIDC_CLIENT_SECRET="$CLOUDRON_OIDC_CLIENT_SECRET"
  export SSO_CREATE_USERS=true
  export OIDC_BUTTON_LABEL="Sign in with Cloudron"
fi
exec node --heap-growing-percent=100 --no-allocation-site-pretenuring dist/server.js
