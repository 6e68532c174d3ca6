#!/usr/bin/env bash
# One device call for issue 5: capture, lab streams, the CUDA example, the peer comparison.
# Run from the repository root on the GPU machine, with the files of DIR (default .cudarun):
#   worksheet (release build, --features cuda), main.cu, peer_compare.py.
# Writes everything under $OUT (at most 8 files); the log is $OUT/log.txt.
D=${1:-.cudarun}
O=${OUT:-/tmp/out}
mkdir -p "$O"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
main() {
step machine
nvidia-smi --query-gpu=name,uuid,driver_version,compute_cap --format=csv
nvcc --version | tail -2
uname -r; date -u +%Y-%m-%dT%H:%M:%SZ
step "worksheet capture"
time "$D/worksheet" capture --out "$O/h200-capture.json"
echo "exit $?"
step "worksheet lab streams (default: 64 MiB, 4 streams, 16 chunks)"
time "$D/worksheet" lab streams --out "$O/h200-lab-streams.json"
echo "exit $?"
step "worksheet lab streams (8 streams, 32 chunks, 300 LCG steps)"
"$D/worksheet" lab streams --streams 8 --chunks 32 --iters 300 --out /tmp/lab-8x32.json
echo "exit $?"
step "cuda-example: build and run"
nvcc -O2 -arch=sm_90 -o /tmp/timing "$D/main.cu" && /tmp/timing "$O/cuda-example.json" 5 50
echo "exit $?"
"$D/worksheet" check "$O/cuda-example.json"
echo "exit $?"
step "peer comparison (torch.cuda.Event, cupy, triton do_bench)"
time python3 "$D/peer_compare.py" "$O/peer.json" "$O/h200-capture.json"
echo "exit $?"
step "replay everything with the carried binary"
"$D/worksheet" check "$O/h200-capture.json" "$O/h200-lab-streams.json" "$O/cuda-example.json" | tail -3
step done
}
main 2>&1 | tee "$O/log.txt"
