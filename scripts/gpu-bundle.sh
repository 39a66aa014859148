#!/usr/bin/env bash
# Packs what the GPU check's `cli` stage needs and the GPU machine lacks (it has no Node and no
# network) into .gpu-bundle/ (ignored by git; name it in the device tool's `carry`):
#   node.xz                 this machine's Node binary (glibc-linked; the GPU machine's glibc is newer);
#   node_modules.tar.xz     the production dependencies (npm ci --omit=dev, no install scripts);
#   dist.tar.xz             the compiled TypeScript (tsc);
#   s3_native.node          the addon, built here by cmake-js with CUDA (sm_80 and sm_90a), cuBLASLt
#                           and NCCL opened at run time as always.
# About 30 MB together, inside the tool's 64 MiB for the tree and what it carries. Run from the
# repository root, then on the GPU machine `bash scripts/gpu-check.sh` unpacks it (stage `cli`).
#   bash scripts/gpu-bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=.gpu-bundle
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "node $(node --version)"
xz -T0 -6 -c "$(readlink -f "$(command -v node)")" >"$BUNDLE/node.xz"

cp package.json package-lock.json "$tmp/"
(cd "$tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
tar cJf "$BUNDLE/node_modules.tar.xz" -C "$tmp" node_modules

npx tsc -p tsconfig.json
tar cJf "$BUNDLE/dist.tar.xz" dist

S3_CUDA=ON node scripts/native-build.mjs cmake "$tmp/addon-build" >"$tmp/addon-build.log" 2>&1 ||
  { tail -40 "$tmp/addon-build.log"; exit 1; }
cp "$tmp/addon-build/Release/s3_native.node" "$BUNDLE/s3_native.node"

du -ch "$BUNDLE"/* | tail -n +1
