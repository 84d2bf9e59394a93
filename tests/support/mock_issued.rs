//! What the mock handed out that a client must send back unchanged: Anthropic thinking
//! signatures (made from the thinking text, so an altered text or signature does not verify,
//! like the real cryptographic ones), redacted-thinking data, and Responses API reasoning
//! items (their encrypted content, and the function calls each one led to).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use base64::Engine;

#[derive(Default)]
pub struct Issued {
    /// Redacted thinking `data` handed out.
    pub redacted: BTreeSet<String>,
    /// Anthropic: tool_use id → the signature of the thinking block issued before it.
    pub thinking_of_call: BTreeMap<String, String>,
    /// Responses: encrypted content → the reasoning item's id.
    pub reasoning: BTreeMap<String, String>,
    /// Responses: call id → the encrypted content of the reasoning that led to it.
    pub reasoning_of_call: BTreeMap<String, String>,
    pub next: u64,
}

fn digest(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    "cairn-mock-thinking".hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

/// The signature the mock gives a thinking text: it verifies only with that very text.
pub fn sign(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("mocksig:{:016x}", digest(text)))
}

pub fn verifies(text: &str, signature: &str) -> bool {
    sign(text) == signature
}

impl Issued {
    pub fn next_id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub fn redacted_data(&mut self) -> String {
        let data = format!("EmwKAhgBEgy{:08}RedactedMockThinking", self.next_id());
        self.redacted.insert(data.clone());
        data
    }

    /// A reasoning item's id and encrypted content, remembered.
    pub fn reasoning_item(&mut self, summary: &str) -> (String, String) {
        let id = format!("rs_mock_{}", self.next_id());
        let encrypted =
            base64::engine::general_purpose::STANDARD.encode(format!("gAAAAmock:{id}:{:016x}", digest(summary)));
        self.reasoning.insert(encrypted.clone(), id.clone());
        (id, encrypted)
    }
}
