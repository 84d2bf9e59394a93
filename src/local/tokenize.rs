//! A llama-server's own tokenizer (`POST /tokenize`), for exact token counts: many texts in one
//! request, and the tokens its chat template puts around each message (`POST /apply-template`).

use std::time::Duration;

use serde_json::{Value, json};

/// Stands between two texts in one `/tokenize` request: token ids are never negative, so no
/// text can produce it, and the answer splits back into one count per text.
const SEPARATOR: i64 = -1;
/// Texts in one request at most, and characters: a long session's first count is split.
const BATCH_TEXTS: usize = 256;
const BATCH_CHARS: usize = 1 << 20;

/// Counts tokens on a llama-server.
#[derive(Clone, Debug)]
pub struct Tokenizer {
    http: reqwest::Client,
    /// `http://host:port`, without `/v1`.
    root: String,
    timeout: Duration,
}

impl Tokenizer {
    /// The tokenizer of the server at `base_url` (an OpenAI-compatible `…/v1`) when it is a
    /// llama-server: it answers `/tokenize`. `None` for any other server.
    pub async fn detect(base_url: &str, timeout: Duration) -> Option<Tokenizer> {
        let base = base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base).to_string();
        let http = crate::net::build_client(&root).ok()?;
        let tokenizer = Tokenizer { http, root, timeout };
        let probe = tokenizer.tokenize(&json!("cairn")).await.ok()?;
        (!probe.is_empty()).then_some(tokenizer)
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let url = format!("{}/{path}", self.root);
        let response =
            self.http.post(&url).json(body).timeout(self.timeout).send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        let answer: Value = response.json().await.map_err(|e| format!("{url} answered {status} without JSON: {e}"))?;
        if !status.is_success() {
            return Err(format!("{url} answered {status}: {}", answer["error"]["message"].as_str().unwrap_or("")));
        }
        Ok(answer)
    }

    async fn tokenize(&self, content: &Value) -> Result<Vec<i64>, String> {
        let answer =
            self.post("tokenize", &json!({"content": content, "add_special": false, "parse_special": true})).await?;
        let tokens = answer["tokens"].as_array().ok_or("the /tokenize answer has no tokens")?;
        Ok(tokens.iter().filter_map(Value::as_i64).collect())
    }

    /// Tokens of each text, as the server counts them inside a prompt (special tokens
    /// spelled out in a text count as the server parses them). Few requests: texts go
    /// together, split apart again at a separator no text can produce.
    pub async fn count(&self, texts: &[&str]) -> Result<Vec<u64>, String> {
        let mut counts = Vec::with_capacity(texts.len());
        let mut start = 0;
        while start < texts.len() {
            let mut end = start;
            let mut chars = 0;
            while end < texts.len()
                && end - start < BATCH_TEXTS
                && (end == start || chars + texts[end].len() <= BATCH_CHARS)
            {
                chars += texts[end].len();
                end += 1;
            }
            counts.extend(self.count_batch(&texts[start..end]).await?);
            start = end;
        }
        Ok(counts)
    }

    async fn count_batch(&self, texts: &[&str]) -> Result<Vec<u64>, String> {
        let mut content = Vec::with_capacity(texts.len() * 2);
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                content.push(json!(SEPARATOR));
            }
            content.push(json!(text));
        }
        let tokens = self.tokenize(&Value::Array(content)).await?;
        let counts: Vec<u64> = tokens.split(|t| *t == SEPARATOR).map(|part| part.len() as u64).collect();
        if counts.len() == texts.len() {
            return Ok(counts);
        }
        // A server that drops or rejects the separator: one request a text.
        let mut counts = Vec::with_capacity(texts.len());
        for text in texts {
            counts.push(self.tokenize(&json!(text)).await?.len() as u64);
        }
        Ok(counts)
    }

    /// Tokens the chat template puts around one message (role header, end marker): the
    /// template applied to one exchange and to it with two more messages, less those two
    /// messages' own tokens, halved.
    pub async fn framing(&self) -> Result<u64, String> {
        let user = |text: &str| json!({"role": "user", "content": text});
        let short = json!({"messages": [user("a")]});
        let long = json!({"messages": [user("a"), {"role": "assistant", "content": "b"}, user("c")]});
        let prompt = |answer: Value| {
            answer["prompt"].as_str().map(str::to_string).ok_or("no prompt in the /apply-template answer")
        };
        let short = prompt(self.post("apply-template", &short).await?)?;
        let long = prompt(self.post("apply-template", &long).await?)?;
        let counts = self.count(&[&short, &long, "b", "c"]).await?;
        let added = counts[1].saturating_sub(counts[0] + counts[2] + counts[3]);
        Ok(added / 2)
    }
}
