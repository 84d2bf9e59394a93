//! Which GGUF file to load: `--local MODEL` (a file, a folder, or a name in the folder `[local]
//! model` names) or `[local] model`, checked to exist and to be GGUF before any server starts.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::LocalError;
use crate::config::{LocalConfig, expand_home};

/// The first bytes of every GGUF file.
const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// The model file to load. `asked` is `--local`'s value; `config_file` is named in the error
/// when nothing names a model.
pub fn resolve_model(asked: Option<&str>, config: &LocalConfig, config_file: &Path) -> Result<PathBuf, LocalError> {
    let configured = config.model_path();
    let path = match (asked, &configured) {
        (Some(asked), configured) => {
            let path = expand_home(asked);
            match configured {
                // A bare name, looked up in the configured folder.
                Some(folder) if !path.exists() && folder.is_dir() && !asked.contains('/') => {
                    return pick(folder, Some(asked));
                }
                _ => path,
            }
        }
        (None, Some(configured)) => configured.clone(),
        (None, None) => return Err(LocalError::NoModel { config: config_file.display().to_string() }),
    };
    if path.is_dir() {
        return pick(&path, None);
    }
    check_gguf(&path)?;
    Ok(path)
}

/// A model of `folder`: the one named (by file name, with or without `.gguf`, or a unique part
/// of it), or the only one there.
fn pick(folder: &Path, name: Option<&str>) -> Result<PathBuf, LocalError> {
    let models = models_in(folder);
    let names: Vec<String> = models.iter().map(|p| file_name(p)).collect();
    let chosen = match name {
        None => match models.as_slice() {
            [] => return Err(LocalError::EmptyFolder { folder: folder.to_path_buf() }),
            [only] => only.clone(),
            _ => return Err(LocalError::Ambiguous { folder: folder.to_path_buf(), names }),
        },
        Some(name) => {
            let wanted = name.trim_end_matches(".gguf").to_lowercase();
            let stem = |p: &PathBuf| file_name(p).trim_end_matches(".gguf").to_lowercase();
            let exact: Vec<&PathBuf> = models.iter().filter(|p| stem(p) == wanted).collect();
            let partial: Vec<&PathBuf> = models.iter().filter(|p| stem(p).contains(&wanted)).collect();
            match (exact.as_slice(), partial.as_slice()) {
                ([one], _) | ([], [one]) => (*one).clone(),
                ([], []) => {
                    return Err(LocalError::NoSuchName { name: name.to_string(), folder: folder.to_path_buf(), names });
                }
                _ => {
                    let names = partial.iter().map(|p| file_name(p)).collect();
                    return Err(LocalError::Ambiguous { folder: folder.to_path_buf(), names });
                }
            }
        }
    };
    check_gguf(&chosen)?;
    Ok(chosen)
}

/// The `.gguf` files of `folder`, sorted; projectors (`mmproj-…`) and the later parts of a
/// split model are not models to pick.
fn models_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    let mut models: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = file_name(p).to_lowercase();
            name.ends_with(".gguf") && !name.starts_with("mmproj") && !is_later_split(&name) && p.is_file()
        })
        .collect();
    models.sort();
    models
}

/// `model-00002-of-00003.gguf`: a part of a split model other than the first, which
/// llama-server finds by itself from the first.
fn is_later_split(name: &str) -> bool {
    let Some(rest) = name.strip_suffix(".gguf") else { return false };
    let parts: Vec<&str> = rest.rsplitn(4, '-').collect();
    matches!(parts.as_slice(), [_, "of", part, _] if part.chars().all(|c| c.is_ascii_digit()) && part.trim_start_matches('0') != "1")
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The file exists and starts like a GGUF file.
pub fn check_gguf(path: &Path) -> Result<(), LocalError> {
    if !path.exists() {
        return Err(LocalError::ModelMissing { path: path.to_path_buf() });
    }
    let unreadable = |e: std::io::Error| LocalError::Unreadable { path: path.to_path_buf(), error: e.to_string() };
    let mut start = Vec::with_capacity(4);
    std::fs::File::open(path).map_err(unreadable)?.take(4).read_to_end(&mut start).map_err(unreadable)?;
    if start != GGUF_MAGIC {
        return Err(LocalError::NotGguf {
            path: path.to_path_buf(),
            start: String::from_utf8_lossy(&start).into_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gguf(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, b"GGUF\x03\0\0\0rest").unwrap();
        path
    }

    fn config(model: Option<&Path>) -> LocalConfig {
        LocalConfig { model: model.map(|m| m.display().to_string()), ..Default::default() }
    }

    #[test]
    fn a_file_a_folder_of_one_or_a_name_in_the_folder_is_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let qwen = gguf(dir.path(), "qwen2.5-coder-7b-q4_k_m.gguf");
        let cfg = Path::new("/c/config.toml");
        assert_eq!(resolve_model(Some(&qwen.display().to_string()), &config(None), cfg).unwrap(), qwen);
        assert_eq!(resolve_model(None, &config(Some(dir.path())), cfg).unwrap(), qwen, "the only one");
        let llama = gguf(dir.path(), "llama-3.2-3b.gguf");
        gguf(dir.path(), "mmproj-qwen.gguf");
        let folder = config(Some(dir.path()));
        assert_eq!(resolve_model(Some("qwen"), &folder, cfg).unwrap(), qwen, "a unique part of the name");
        assert_eq!(resolve_model(Some("llama-3.2-3b.gguf"), &folder, cfg).unwrap(), llama);
        let e = resolve_model(None, &folder, cfg).unwrap_err().to_string();
        assert!(e.contains("several models") && e.contains("--local NAME") && !e.contains("mmproj"), "{e}");
        let e = resolve_model(Some("mistral"), &folder, cfg).unwrap_err().to_string();
        assert!(e.contains("no model named \"mistral\"") && e.contains("llama-3.2-3b.gguf"), "{e}");
        let e = resolve_model(None, &config(None), cfg).unwrap_err().to_string();
        assert!(e.contains("--local MODEL") && e.contains("/c/config.toml"), "{e}");
    }

    #[test]
    fn a_missing_file_or_one_that_is_not_gguf_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.gguf");
        let e = resolve_model(Some(&missing.display().to_string()), &config(None), Path::new("c")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let safetensors = dir.path().join("model.safetensors");
        std::fs::write(&safetensors, b"{\"__metadata__\": {}}").unwrap();
        let e = resolve_model(Some(&safetensors.display().to_string()), &config(None), Path::new("c")).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("is not a GGUF model") && e.contains("convert_hf_to_gguf.py"), "{e}");
        let e = resolve_model(None, &config(Some(dir.path())), Path::new("c")).unwrap_err().to_string();
        assert!(e.contains("holds no .gguf model"), "{e}");
    }

    #[test]
    fn later_parts_of_a_split_model_are_not_offered() {
        assert!(is_later_split("qwen-00002-of-00003.gguf"));
        assert!(!is_later_split("qwen-00001-of-00003.gguf"));
        assert!(!is_later_split("qwen2.5-7b.gguf"));
    }
}
