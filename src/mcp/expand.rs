//! `${VAR}` and `${VAR:-default}` in a server's command, arguments, environment, URL and
//! headers (Claude Code's `.mcp.json` syntax), expanded when the server starts. The expanded
//! values live only in the running connection; what is stored keeps the variable names.

/// `text` with every `${VAR}` replaced by `env(VAR)`, `${VAR:-default}` by the default when
/// the variable is unset or empty. An unset variable without a default is an error naming it.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{text}` has a `${{` without its closing `}}`"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{inner}}}` is not a variable name"));
        }
        match (env(name).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the environment variable {name} is not set; set it or give a default as ${{{name}:-value}}"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The variables `text` names, for keeping their values out of everything stored.
pub fn variables(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let name = after[..end].split(":-").next().unwrap_or("");
        if !name.is_empty() {
            names.push(name.to_string());
        }
        rest = &after[end + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables_and_defaults() {
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer s3cret");
        assert_eq!(expand("${MISSING:-dflt}/${EMPTY:-x}", &env).unwrap(), "dflt/x");
        assert_eq!(expand("no vars", &env).unwrap(), "no vars");
        let err = expand("${MISSING}", &env).unwrap_err();
        assert!(err.contains("MISSING") && err.contains("not set"), "{err}");
        assert!(expand("${TOKEN", &env).is_err());
        assert_eq!(variables("a ${X} b ${Y:-z}"), ["X", "Y"]);
    }
}
