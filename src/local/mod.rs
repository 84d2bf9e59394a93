//! Local model servers: the llama-server cairn starts itself for `--local` (the model file
//! checked, the process started in its own group, its loading shown, watched, restarted once,
//! stopped at exit or kept), and a llama-server's own tokenizer for exact token counts.

mod error;
mod launch;
mod model;
mod record;
mod server;
mod tokenize;

pub use error::LocalError;
pub use model::{check_gguf, resolve_model};
pub use server::{LoadProgress, LocalServer, ServerInfo};
pub use tokenize::Tokenizer;
