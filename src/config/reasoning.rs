//! How much a model should think: `thinking = off | low | medium | high | N` in config.toml and
//! `--thinking` on the command line, and what each model can do with it (the catalog's
//! `thinking` key).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The user's choice. Unset (in config and on the command line) means the model's own default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingSetting {
    Off,
    Low,
    Medium,
    High,
    /// A budget in tokens (Anthropic's `budget_tokens`; an effort level for models that take
    /// one instead).
    Budget(u32),
}

/// Anthropic refuses a thinking budget below this.
pub const MIN_THINKING_BUDGET: u32 = 1_024;

impl ThinkingSetting {
    /// `off`, `low`, `medium`, `high`, or a number of tokens (at least 1024).
    pub fn parse(text: &str) -> Result<ThinkingSetting, String> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "off" | "none" | "false" => Ok(ThinkingSetting::Off),
            "low" => Ok(ThinkingSetting::Low),
            "medium" => Ok(ThinkingSetting::Medium),
            "high" => Ok(ThinkingSetting::High),
            _ => match t.replace('_', "").parse::<u32>() {
                Ok(n) if n >= MIN_THINKING_BUDGET => Ok(ThinkingSetting::Budget(n)),
                Ok(n) => Err(format!(
                    "a thinking budget of {n} tokens is too small; give at least {MIN_THINKING_BUDGET}, or off, low, medium or high"
                )),
                Err(_) => Err(format!(
                    "{text:?} is not a thinking level; use off, low, medium, high or a budget in tokens (e.g. 16000)"
                )),
            },
        }
    }

    pub fn as_string(&self) -> String {
        match self {
            ThinkingSetting::Off => "off".into(),
            ThinkingSetting::Low => "low".into(),
            ThinkingSetting::Medium => "medium".into(),
            ThinkingSetting::High => "high".into(),
            ThinkingSetting::Budget(n) => n.to_string(),
        }
    }
}

impl std::str::FromStr for ThinkingSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ThinkingSetting::parse(s)
    }
}

impl Serialize for ThinkingSetting {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ThinkingSetting::Budget(n) => serializer.serialize_u32(*n),
            ThinkingSetting::Off | ThinkingSetting::Low | ThinkingSetting::Medium | ThinkingSetting::High => {
                serializer.serialize_str(&self.as_string())
            }
        }
    }
}

impl<'de> Deserialize<'de> for ThinkingSetting {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(i64),
            Text(String),
            Flag(bool),
        }
        let parsed = match Raw::deserialize(deserializer)? {
            Raw::Number(n) => ThinkingSetting::parse(&n.to_string()),
            Raw::Text(t) => ThinkingSetting::parse(&t),
            Raw::Flag(false) => Ok(ThinkingSetting::Off),
            Raw::Flag(true) => Err("`true` does not say how much; use low, medium, high or a budget in tokens".into()),
        };
        parsed.map_err(serde::de::Error::custom)
    }
}

/// What a model can do with thinking, as the catalog says (`thinking = "…"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkingSupport {
    /// No thinking, or nothing cairn can ask for.
    #[default]
    None,
    /// Anthropic extended thinking with a token budget (`type: enabled`).
    Budget,
    /// The same, interleaved with tool calls (Claude 4: the `interleaved-thinking` beta).
    BudgetInterleaved,
    /// Anthropic adaptive thinking with an effort level; may be turned off.
    Adaptive,
    /// Adaptive thinking that cannot be turned off.
    AdaptiveAlways,
    /// OpenAI reasoning models: `reasoning_effort` / `reasoning.effort`.
    Effort,
}

impl ThinkingSupport {
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingSupport::None => "none",
            ThinkingSupport::Budget => "budget",
            ThinkingSupport::BudgetInterleaved => "budget-interleaved",
            ThinkingSupport::Adaptive => "adaptive",
            ThinkingSupport::AdaptiveAlways => "adaptive-always",
            ThinkingSupport::Effort => "effort",
        }
    }

    /// Whether the model reasons at all (for choosing the Responses API, and for `doctor`).
    pub fn reasons(self) -> bool {
        !matches!(self, ThinkingSupport::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_budgets_parse_and_bad_ones_say_why() {
        assert_eq!(ThinkingSetting::parse("High"), Ok(ThinkingSetting::High));
        assert_eq!(ThinkingSetting::parse("off"), Ok(ThinkingSetting::Off));
        assert_eq!(ThinkingSetting::parse("16_000"), Ok(ThinkingSetting::Budget(16_000)));
        assert!(ThinkingSetting::parse("500").unwrap_err().contains("at least 1024"));
        assert!(ThinkingSetting::parse("lots").unwrap_err().contains("off, low, medium, high"));
    }

    #[test]
    fn config_takes_words_numbers_and_false() {
        #[derive(Deserialize)]
        struct C {
            thinking: ThinkingSetting,
        }
        let c: C = toml::from_str("thinking = \"medium\"").unwrap();
        assert_eq!(c.thinking, ThinkingSetting::Medium);
        let c: C = toml::from_str("thinking = 8000").unwrap();
        assert_eq!(c.thinking, ThinkingSetting::Budget(8_000));
        let c: C = toml::from_str("thinking = false").unwrap();
        assert_eq!(c.thinking, ThinkingSetting::Off);
        let err = toml::from_str::<C>("thinking = 10").err().unwrap().to_string();
        assert!(err.contains("too small"), "{err}");
    }
}
