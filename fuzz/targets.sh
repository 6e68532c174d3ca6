# The fuzz targets and their input size limits, sourced by run.sh, smoke.sh, minimize.sh and
# device_campaign.sh so that every script knows every target (a target added to Cargo.toml
# goes here too; smoke.sh checks that the two lists agree).
# shellcheck shell=bash
TARGETS=(case form_json form_csv kineto kineto_paths kineto_fast nsys value
         audit compat_hta ranks compare export form_stdin lesson)

# The largest input libFuzzer makes for TARGET (-max_len): each target's largest seed fits.
max_len_of() {
    case "$1" in
        value) echo 64 ;;
        form_json | form_csv) echo 4096 ;;
        form_stdin | lesson) echo 8192 ;;
        nsys) echo 8192 ;;
        case | kineto | kineto_paths) echo 16384 ;;
        audit | compat_hta | export | compare | kineto_fast) echo 32768 ;;
        ranks) echo 49152 ;;
        *) return 1 ;;
    esac
}

# libFuzzer flags of TARGET beyond the common ones (run.sh and device_campaign.sh add them).
# `-entropic=0` (libFuzzer's vanilla schedule) where it runs more inputs a second with the
# same checks: the entropic schedule's per-feature bookkeeping costs most for the targets that
# reach thousands of counters per input (CAMPAIGNS.md, "Rates per target"). Left on where it
# did not pay in the measurement (kineto, kineto_paths, audit, compat_hta, and the fast ones).
flags_of() {
    case "$1" in
        ranks | export | form_stdin | form_csv | nsys | compare | lesson) echo "-entropic=0" ;;
        *) ;;
    esac
}

# The device plan (`device_campaign.sh run plan`): seconds of TARGET on 16 jobs so that it
# reaches 10^7 executions with about 1.3x margin, from the device's executions per job and
# second (CAMPAIGNS.md, "The device plan"). A machine with more cores runs each target for
# 16/JOBS of this. Targets of the plan that this checkout does not build are skipped
# (kineto_fast: a slot for the fast path's target, sized from `kineto`'s rate until measured).
PLAN=(value case form_json lesson compat_hta compare form_csv nsys kineto_fast kineto
      audit kineto_paths export form_stdin ranks)
plan_seconds_of() {
    case "$1" in
        value) echo 10 ;;
        case | form_json | lesson) echo 50 ;;
        compat_hta) echo 70 ;;
        compare) echo 120 ;;
        form_csv) echo 260 ;;
        nsys) echo 310 ;;
        kineto | kineto_fast) echo 680 ;;
        audit) echo 830 ;;
        kineto_paths) echo 950 ;;
        export) echo 1530 ;;
        form_stdin) echo 1630 ;;
        ranks) echo 2980 ;;
        *) return 1 ;;
    esac
}

# Fails with the list of targets unless TARGET is one of them.
known_target() {
    if ! max_len_of "$1" >/dev/null; then
        echo "unknown target $1: ${TARGETS[*]}" >&2
        return 2
    fi
}
