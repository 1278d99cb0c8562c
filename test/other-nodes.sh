#!/usr/bin/env bash
# The tests that exercise the runtime's moving parts, on the other maintained Node lines (the main
# run is on the Node that runs npm): the CLI as a child process (a build, the RPC source's fetch,
# nginx in front of snapshot serve), a whole build (worker threads), LMDB's native addon (its
# prebuilt binary must load), and the HTTP server with its compression. Each Node comes from the npm registry (the `node` package, fetched by npx, cached
# in ~/.npm after the first run). OTHER_NODES overrides the lines (e.g. OTHER_NODES=24).
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=(test/rpc-wait.test.ts test/nginx-upstream.test.ts test/build-demo.test.ts test/threads.test.ts test/index-store.test.ts test/serve.test.ts test/serve-compress.test.ts)
for v in ${OTHER_NODES:-22 24}; do
  echo "== Node $v: $(npx -y "node@$v" --version)"
  npx -y "node@$v" node_modules/vitest/vitest.mjs run "${FILES[@]}"
done
