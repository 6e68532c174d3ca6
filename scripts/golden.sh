#!/usr/bin/env bash
# The golden diff of a refactor: every output of every command that reads a trace or a case,
# on tests/data, fixtures/ and the shared traces, written by two binaries and compared byte
# for byte. Usage:
#
#   scripts/golden.sh BEFORE_BINARY AFTER_BINARY [OUT_DIR]
#
# Prints one line per differing output and exits 1 when any differs, 0 when every output is
# identical. The output folder keeps both sides (OUT_DIR/before, OUT_DIR/after) to look at.
# Outputs that name a temporary path or the binary's version are normalised first (the
# version line and `--version` are not compared).
set -u
before=${1:?before binary}
after=${2:?after binary}
out=${3:-$(mktemp -d /tmp/golden.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

traces=(tests/data/traces/*.json.gz tests/data/truth/*.json.gz tests/data/nsys/*.sqlite)
[ -d ../shared/traces ] && traces+=(../shared/traces/*/*.json.gz ../shared/traces/*/*.sqlite)
cases=(fixtures/*.json fixtures/*/*.json)

# run SIDE NAME ARGS...: the command's stdout, stderr and exit code under SIDE/NAME.
run() {
  local side=$1 name=$2
  shift 2
  local bin=$before
  [ "$side" = after ] && bin=$after
  local dir="$out/$side"
  mkdir -p "$dir"
  (cd "$dir" && COLUMNS=100 NO_COLOR=1 "$bin" "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
}

for side in before after; do
  for t in "${traces[@]}"; do
    [ -f "$t" ] || continue
    n=$(echo "$t" | tr '/.' '__')
    a="$root/$t"
    run "$side" "import-$n" import "$a"
    run "$side" "import-json-$n" import "$a" --format json
    run "$side" "import-case-$n" import "$a" -o "case-$n.json" --expect
    run "$side" "audit-$n" audit "$a"
    run "$side" "audit-json-$n" audit "$a" --format json
    run "$side" "render-$n" render "$a" --format text
    run "$side" "report-$n" report "$a" -o "report-$n.html"
    case "$t" in
      *.json.gz) run "$side" "hta-$n" import "$a" --compat hta ;;
    esac
  done
  for d in tests/data/ranks tests/data/ranks-sync; do
    n=$(echo "$d" | tr '/.' '__')
    run "$side" "import-$n" import "$root/$d"
    run "$side" "import-json-$n" import "$root/$d" --format json
    run "$side" "import-case-$n" import "$root/$d" -o "case-$n.json"
  done
  for c in "${cases[@]}"; do
    [ -f "$c" ] || continue
    n=$(echo "$c" | tr '/.' '__')
    run "$side" "eval-$n" eval "$root/$c"
    run "$side" "eval-json-$n" eval "$root/$c" --format json
    run "$side" "render-$n" render "$root/$c" --format text
  done
  run "$side" "check-fixtures" check "$root/fixtures"
done

status=0
while IFS= read -r f; do
  rel=${f#"$out/before/"}
  if ! cmp -s "$f" "$out/after/$rel"; then
    echo "differs: $rel"
    status=1
  fi
done < <(find "$out/before" -type f | sort)
while IFS= read -r f; do
  rel=${f#"$out/after/"}
  [ -e "$out/before/$rel" ] || { echo "only after: $rel"; status=1; }
done < <(find "$out/after" -type f | sort)
echo "outputs compared: $(find "$out/before" -type f | wc -l) (kept in $out)"
exit $status
