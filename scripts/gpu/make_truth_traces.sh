#!/usr/bin/env bash
# Make every truth trace: bash scripts/gpu/make_truth_traces.sh OUTDIR  (needs one CUDA GPU).
# Each variant runs in its own process, so "cold" is cold and one failure does not stop the rest.
set -u
out=${1:?usage: make_truth_traces.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvidia-smi || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
status=0
for v in clean_foreach clean_fused item_per_step sync_per_step cold pipeline pipeline_sync_events; do
  echo "== $v"
  timeout 150 python3 "$here/truth_traces.py" "$out" "$v" || { echo "== $v FAILED rc=$?"; status=1; }
done
ls -l "$out"
exit $status
