#!/bin/bash
# Installs the Debian 12 packages powerrank needs to build, run its demo and run its tests.
#   usage: tools/install-deps.sh [--test]      (--test adds pgTAP, pg_cron, NetworkX, igraph)
# Needs root (or sudo).  Installs only what is missing, so a second run is quick.
set -euo pipefail
packages=(make gcc g++ libc6-dev postgresql-15 postgresql-server-dev-15 zlib1g-dev libgloo-dev)
if [ "${1:-}" = "--test" ]; then
    packages+=(postgresql-15-pgtap pgtap libtap-parser-sourcehandler-pgtap-perl postgresql-15-cron
               python3 python3-networkx python3-scipy python3-numpy python3-igraph libigraph-dev pkg-config)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "installing: ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
