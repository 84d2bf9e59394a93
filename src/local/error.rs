//! What can go wrong with a local server, each saying what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("no local model is named: give one with --local MODEL (a .gguf file), or set model in [local] of {config}")]
    NoModel { config: String },
    #[error("the model {} does not exist; check the path given with --local or as model in [local]", .path.display())]
    ModelMissing { path: PathBuf },
    #[error(
        "{} is not a GGUF model (it starts with {start:?}, not \"GGUF\"); llama-server loads .gguf files: download a GGUF build of the model, or convert it with llama.cpp's convert_hf_to_gguf.py",
        .path.display()
    )]
    NotGguf { path: PathBuf, start: String },
    #[error("cannot read the model {}: {error}", .path.display())]
    Unreadable { path: PathBuf, error: String },
    #[error("the folder {} holds no .gguf model; put one there or give the file with --local", .folder.display())]
    EmptyFolder { folder: PathBuf },
    #[error("the folder {} holds several models ({}); pick one with --local NAME", .folder.display(), .names.join(", "))]
    Ambiguous { folder: PathBuf, names: Vec<String> },
    #[error("no model named {name:?} in {} (it holds {}); give one of those names or a path", .folder.display(), .names.join(", "))]
    NoSuchName { name: String, folder: PathBuf, names: Vec<String> },
    #[error(
        "{server} was not found{where_}; install llama.cpp's llama-server (scripts/build-llama-server.sh builds one) or set server in [local] to its path",
        where_ = if .server.contains('/') { "" } else { " on PATH" }
    )]
    ServerMissing { server: String },
    #[error("could not start {server}: {error}")]
    SpawnFailed { server: String, error: String },
    #[error("llama-server stopped while loading {model} ({status}): {tail}\n  the whole log is in {}", .log.display())]
    Exited { model: String, status: String, tail: String, log: PathBuf },
    #[error(
        "llama-server had not loaded {model} after {secs} s; raise load_timeout_secs in [local] for a large model, or see its log in {}",
        .log.display()
    )]
    LoadTimeout { model: String, secs: u64, log: PathBuf },
}
