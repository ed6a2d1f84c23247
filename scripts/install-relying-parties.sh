#!/usr/bin/env bash
# Installs the relying-party libraries whose recipes (docs/relying-parties.md) the tests run as written:
# Authlib with Flask and requests for the system Python (/usr/bin/python3), and Apache with
# mod_auth_openidc. Debian's packages, as scripts/install-chromium.sh installs Chromium.
# Idempotent: does nothing when all are there. CI runs as root.
set -euo pipefail

PYTHON=/usr/bin/python3
APACHE=/usr/sbin/apache2
OPENIDC_MODULE=/usr/lib/apache2/modules/mod_auth_openidc.so

missing=()
if ! [ -x "$PYTHON" ] || ! "$PYTHON" -c 'import authlib, flask, requests' >/dev/null 2>&1; then
  missing+=(python3-authlib python3-flask python3-requests)
fi
if ! [ -x "$APACHE" ] || ! [ -f "$OPENIDC_MODULE" ]; then
  missing+=(apache2 libapache2-mod-auth-openidc)
fi

if [ "${#missing[@]}" -eq 0 ]; then
  echo "relying-party libraries already installed (Authlib, Flask, requests, Apache, mod_auth_openidc)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

$SUDO apt-get update -qq
# the tests start their own Apache on a free port, from their own configuration
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"

"$PYTHON" -c 'import authlib, flask, requests; print("Authlib", authlib.__version__)'
[ -f "$OPENIDC_MODULE" ] && echo "mod_auth_openidc installed: $OPENIDC_MODULE"
