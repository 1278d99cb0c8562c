#!/bin/bash
# Submits a staged snapshot build to Slurm: the index job; the shard array (snapshot.sbatch
# beside this file, tasks 0-3) once the index succeeded; the merge (then verify, then publish
# when SNAPSHOT_PUBLISH_TO is set) once every shard succeeded. A failed stage cancels the
# stages after it (--kill-on-invalid-dep). Prints the three job ids, index, shards, merge, one
# a line. Logs: $SNAPSHOT_WORK/logs/.
# Environment: as snapshot.sbatch says (SNAPSHOT_WORK, SNAPSHOT_SOURCE, SNAPSHOT_NETWORK,
# SNAPSHOT_CMD), and SNAPSHOT_PUBLISH_TO=s3://<bucket>/<prefix> to publish (credentials as
# for snapshot publish: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION).
# Any other arguments go to every sbatch (e.g. --partition=batch, --account=…).
set -euo pipefail
: "${SNAPSHOT_WORK:?set SNAPSHOT_WORK to a directory every node sees}"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$SNAPSHOT_WORK/logs" "$SNAPSHOT_WORK/shards"
common=(--parsable --export=ALL --kill-on-invalid-dep=yes --chdir="$SNAPSHOT_WORK" "$@")
jobid() { echo "${1%%;*}"; } # --parsable prints <id> or <id>;<cluster>

# The job scripts below are quoted heredocs: their variables expand in the job, from the
# environment sbatch passed on.
index=$(jobid "$(sbatch "${common[@]}" --job-name=snapshot-index --output="$SNAPSHOT_WORK/logs/%x-%j.out" <<'EOF'
#!/bin/bash
set -euo pipefail
# shellcheck disable=SC2086
snapshot() { ${SNAPSHOT_CMD:-command snapshot} "$@"; }
snapshot index ${SNAPSHOT_SOURCE:+--source "$SNAPSHOT_SOURCE"} ${SNAPSHOT_NETWORK:+--network "$SNAPSHOT_NETWORK"} --state "$SNAPSHOT_WORK/state"
EOF
)")

shards=$(jobid "$(sbatch "${common[@]}" --dependency="afterok:$index" --output="$SNAPSHOT_WORK/logs/%x-%A_%a.out" "$here/snapshot.sbatch")")

merge=$(jobid "$(sbatch "${common[@]}" --dependency="afterok:$shards" --job-name=snapshot-merge --output="$SNAPSHOT_WORK/logs/%x-%j.out" <<'EOF'
#!/bin/bash
set -euo pipefail
# shellcheck disable=SC2086
snapshot() { ${SNAPSHOT_CMD:-command snapshot} "$@"; }
shards=$SNAPSHOT_WORK/shards
snapshot merge --out "$SNAPSHOT_WORK/out" "$shards/0" "$shards/1" "$shards/2" "$shards/3"
snapshot verify --dir "$SNAPSHOT_WORK/out"
if [ -n "${SNAPSHOT_PUBLISH_TO:-}" ]; then
  snapshot publish --dir "$SNAPSHOT_WORK/out" --to "$SNAPSHOT_PUBLISH_TO"
fi
EOF
)")

printf '%s\n' "$index" "$shards" "$merge"
