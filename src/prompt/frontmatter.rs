//! Front matter of command and skill files, in both layouts users already have: Claude Code's
//! YAML between `---` lines (flat keys, strings, and lists as `[a, b]` or `- a` lines) and
//! Kontekst's TOML between `+++` lines. Returns the keys as strings or lists, and the body.

use std::collections::BTreeMap;

/// A front-matter value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// A list as written, or a text split at commas (Claude Code's `allowed-tools: A, B`).
    pub fn items(&self) -> Vec<String> {
        match self {
            Value::List(items) => items.clone(),
            Value::Text(text) => split_top_level_commas(text),
        }
    }

    pub fn text(&self) -> String {
        match self {
            Value::Text(text) => text.clone(),
            Value::List(items) => items.join(", "),
        }
    }

    pub fn flag(&self) -> Option<bool> {
        match self.text().trim() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        }
    }
}

/// A file's front matter (keys lower-cased, `_` and `-` alike) and its body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub keys: BTreeMap<String, Value>,
    pub body: String,
}

impl FrontMatter {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.keys.get(&normal_key(key))
    }

    pub fn text(&self, key: &str) -> Option<String> {
        self.get(key).map(Value::text).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
    }
}

fn normal_key(key: &str) -> String {
    key.trim().to_ascii_lowercase().replace('-', "_")
}

/// Split `text` into front matter and body. Text without front matter is all body; front
/// matter that cannot be read is an error saying where.
pub fn parse(text: &str) -> Result<FrontMatter, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.lines().next().unwrap_or("").trim_end();
    let fence = match first {
        "---" => "---",
        "+++" => "+++",
        _ => return Ok(FrontMatter { keys: BTreeMap::new(), body: text.to_string() }),
    };
    let after_first = &text[text.find('\n').map_or(text.len(), |i| i + 1)..];
    let mut offset = 0;
    let mut end = None;
    for line in after_first.split_inclusive('\n') {
        if line.trim_end() == fence {
            end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((head_end, body_start)) = end else {
        return Err(format!("the front matter opened with `{fence}` on line 1 is never closed"));
    };
    let head = &after_first[..head_end];
    let body = after_first[body_start..].to_string();
    let keys = if fence == "+++" { toml_keys(head)? } else { yaml_keys(head)? };
    Ok(FrontMatter { keys, body })
}

fn toml_keys(head: &str) -> Result<BTreeMap<String, Value>, String> {
    let table: toml::Table = toml::from_str(head).map_err(|e| format!("front matter (TOML): {}", e.message()))?;
    Ok(table
        .into_iter()
        .map(|(k, v)| {
            let value = match v {
                toml::Value::String(s) => Value::Text(s),
                toml::Value::Array(items) => Value::List(
                    items
                        .into_iter()
                        .map(|i| i.as_str().map(str::to_string).unwrap_or_else(|| i.to_string()))
                        .collect(),
                ),
                other => Value::Text(other.to_string()),
            };
            (normal_key(&k), value)
        })
        .collect())
}

/// The flat YAML that command and skill files use; nested maps are not read.
fn yaml_keys(head: &str) -> Result<BTreeMap<String, Value>, String> {
    let mut keys = BTreeMap::new();
    let mut list_key: Option<String> = None;
    for (i, raw) in head.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let (Some(key), Some(item)) = (&list_key, line.trim_start().strip_prefix("- ")) {
            if let Some(Value::List(items)) = keys.get_mut(key) {
                items.push(unquote(item.trim()));
            }
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            // Nested content we do not read (a map under a key): skip it.
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("front matter line {}: `{line}` is not `key: value`", i + 2));
        };
        let key = normal_key(key);
        let value = value.trim();
        list_key = None;
        if value.is_empty() {
            keys.insert(key.clone(), Value::List(Vec::new()));
            list_key = Some(key);
        } else if let Some(inner) = value
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            // `[issue] [area]` (an argument hint) is text, not a list.
            .filter(|inner| !inner.contains(['[', ']']))
        {
            keys.insert(key, Value::List(split_top_level_commas(inner).into_iter().map(|s| unquote(&s)).collect()));
        } else {
            keys.insert(key, Value::Text(unquote(value)));
        }
    }
    Ok(keys)
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    s.to_string()
}

/// `Bash(git add:*), Read` → two items: commas inside parentheses do not split.
fn split_top_level_commas(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth <= 0 {
            items.push(current.trim().to_string());
            current.clear();
        } else {
            current.push(c);
        }
    }
    items.push(current.trim().to_string());
    items.into_iter().filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claude_code_yaml() {
        let text = "---\ndescription: Fix an issue\nargument-hint: [issue-number]\nallowed-tools: Bash(git add:*), Bash(git status:*), Read\nmodel: claude-haiku\n---\nFix issue $ARGUMENTS.\n";
        let fm = parse(text).unwrap();
        assert_eq!(fm.text("description").as_deref(), Some("Fix an issue"));
        assert_eq!(fm.get("argument_hint").unwrap().items(), ["issue-number"]);
        assert_eq!(fm.get("allowed-tools").unwrap().items(), ["Bash(git add:*)", "Bash(git status:*)", "Read"]);
        assert_eq!(fm.body, "Fix issue $ARGUMENTS.\n");
        let listed = parse("---\nallowed-tools:\n  - Read\n  - \"Bash(ls)\"\nname: x\n---\nbody").unwrap();
        assert_eq!(listed.get("allowed_tools").unwrap().items(), ["Read", "Bash(ls)"]);
        assert_eq!(listed.text("name").as_deref(), Some("x"));
    }

    #[test]
    fn reads_kontekst_toml_and_plain_files() {
        let fm = parse("+++\nname = \"summarize\"\ndescription = \"Summarize a file\"\ndisable_model_invocation = true\n+++\n\nSummarize $ARGUMENTS\n").unwrap();
        assert_eq!(fm.text("name").as_deref(), Some("summarize"));
        assert_eq!(fm.get("disable-model-invocation").and_then(Value::flag), Some(true));
        assert_eq!(fm.body.trim(), "Summarize $ARGUMENTS");
        let plain = parse("Just a prompt\n---\nnot front matter").unwrap();
        assert!(plain.keys.is_empty() && plain.body.starts_with("Just a prompt"));
        assert!(parse("---\ndescription: x\n").unwrap_err().contains("never closed"));
    }
}
