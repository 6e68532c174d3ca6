//! The `worksheet` binary: parses arguments and maps the library's result to an exit code.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(worksheet::cli::main_with_args(std::env::args_os()))
}
