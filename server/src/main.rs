//! The `switchboard` binary: parses the command line and hands over to the library.

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Panics go through the log (as JSON when configured), not raw to stderr.
    std::panic::set_hook(Box::new(|info| {
        tracing::error!(panic = %info, "a task panicked");
    }));
    let cli = server::cli::Cli::parse();
    match server::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
