use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: first thing, before the runtime or anything else can start a thread or a child.
    unsafe { cairn::config::take_keys_from_env() };
    // Before any hook, server or command can start: none of them may read the keys from memory.
    if let Err(e) = cairn::config::keep_memory_private() {
        eprintln!("cairn: {e}; other processes of yours could read cairn's memory");
    }
    let cli = cairn::Cli::parse();
    if let Some(code) = cairn::run_before_runtime(&cli) {
        return code;
    }
    // A session will talk to a provider: have the TLS roots loaded meanwhile, off every loop.
    if cli.command.is_none() {
        cairn::net::warm_up_tls();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(cairn::run(cli))
}
