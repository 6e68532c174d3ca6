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

# Fails with the list of targets unless TARGET is one of them.
known_target() {
    if ! max_len_of "$1" >/dev/null; then
        echo "unknown target $1: ${TARGETS[*]}" >&2
        return 2
    fi
}
