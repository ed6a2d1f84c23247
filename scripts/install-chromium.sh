#!/usr/bin/env bash
# Installs Chromium for the browser tests (playwright-core drives the system browser).
# Idempotent: does nothing when /usr/bin/chromium is already there. CI runs as root.
set -euo pipefail

CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$CHROMIUM_PATH" ]; then
  echo "chromium already installed at $CHROMIUM_PATH"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

if [ -x "$CHROMIUM_PATH" ]; then
  echo "chromium installed: $("$CHROMIUM_PATH" --version 2>/dev/null || echo "$CHROMIUM_PATH")"
else
  echo "chromium was installed but $CHROMIUM_PATH is missing" >&2
  exit 1
fi
