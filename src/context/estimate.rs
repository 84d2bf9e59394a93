//! The rough token estimator of seed 001: characters / 3.2, plus 10 per message for framing.
//! Calibrated against provider-reported usage elsewhere; this is only the uncalibrated part.

use crate::conversation::Message;

/// Framing overhead of one message (role, separators), in tokens.
pub const MESSAGE_OVERHEAD_TOKENS: u64 = 10;

pub fn estimate_text_tokens(chars: usize, chars_per_token: f64) -> u64 {
    (chars as f64 / chars_per_token).ceil() as u64
}

pub fn estimate_message_tokens(message: &Message, chars_per_token: f64) -> u64 {
    estimate_text_tokens(message.char_len(), chars_per_token) + MESSAGE_OVERHEAD_TOKENS
}
