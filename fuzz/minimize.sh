#!/usr/bin/env bash
# Minimises a grown corpus into the committed seeds: fuzz/minimize.sh TARGET DIR...
#
# libFuzzer's -merge=1 keeps, from fuzz/seeds/TARGET and every DIR (a corpus a campaign
# grew: fuzz/corpus/TARGET, or corpus/TARGET from device_campaign.sh's corpus.tar.gz), the
# smallest set of inputs that reaches the same coverage, into a fresh folder; that folder
# then replaces fuzz/seeds/TARGET. Check the size before committing (keep each target's
# seeds to tens of KB: `du -sh fuzz/seeds/*`). Builds like run.sh.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=fuzz/targets.sh
. ./targets.sh
if [ $# -lt 2 ]; then
    echo "usage: fuzz/minimize.sh TARGET DIR..." >&2
    exit 2
fi
target=$1
shift
known_target "$target" || exit 2
target_dir=()
base=$PWD/target
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    target_dir=(--target-dir "$CARGO_TARGET_DIR/fuzz")
    base=$CARGO_TARGET_DIR/fuzz
fi
cargo +nightly fuzz build "${target_dir[@]}" -O -a -s none "$target"
bin=$(ls "$base"/*/release/"$target")
merged=$(mktemp -d)
trap 'rm -rf "$merged"' EXIT
"$bin" -merge=1 -max_len="$(max_len_of "$target")" -rss_limit_mb=2048 -timeout=10 \
    "$merged" "seeds/$target" "$@" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true
rm -rf "seeds/$target" && mkdir -p "seeds/$target"
cp "$merged"/* "seeds/$target/" 2>/dev/null || true
echo "seeds/$target: $(ls "seeds/$target" | wc -l) files, $(du -sh "seeds/$target" | cut -f1)"
