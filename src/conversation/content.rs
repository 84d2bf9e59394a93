//! The content blocks today's models add to plain text and tool calls: a model's thinking (with
//! what its provider needs back to trust it) and images.
//!
//! Plain data: no IO, no wire formats. `llm` decides what each provider is sent of them.

use serde::{Deserialize, Serialize};

/// Which wire produced a thinking block: a block is only ever sent back on the wire, and to the
/// model, that made it (a signature of one model is refused by another).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingSource {
    /// Anthropic Messages: a `thinking` block with its `signature`, or a `redacted_thinking`
    /// block whose `data` is kept in `signature`.
    Anthropic,
    /// OpenAI Responses: a `reasoning` item; `signature` holds its `encrypted_content`.
    OpenAiResponses,
}

/// A model's thinking before (or between) its answer and tool calls. Sent back unchanged inside
/// the tool loop it belongs to, which Anthropic requires and the Responses API needs (with
/// `store: false`) to continue the model's reasoning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    pub source: ThinkingSource,
    /// The model that thought it, as requested: signatures are bound to it.
    pub model: String,
    /// What the model shows of its thinking (Anthropic's thinking text, the Responses API's
    /// reasoning summary); empty when redacted or not shown.
    #[serde(default)]
    pub text: String,
    /// Opaque, and sent back byte for byte: Anthropic's `signature` (or a redacted block's
    /// `data`), the Responses API's `encrypted_content`.
    #[serde(default)]
    pub signature: String,
    /// Anthropic's `redacted_thinking`: nothing to show, only `signature` to send back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
    /// The Responses API's item id (`rs_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The Responses API's summary parts as they came (`text` is them joined for reading),
    /// so they go back unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
}

/// An image, base64-encoded, as a user attached it or a tool read it. Already capped in size
/// when made (`tools::image`), so every wire can send it as it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The encoded image in standard base64.
    pub data: String,
    pub width: u32,
    pub height: u32,
    /// Where it came from, for people (`shot.png`); never sent to the model as a path.
    #[serde(default)]
    pub source: String,
}

/// Anthropic's vision cost: about one token per 750 pixels, for an image within its size limits
/// (1.15 megapixels; larger ones are scaled down by the API before they are counted).
const PIXELS_PER_TOKEN: u64 = 750;
const MAX_COUNTED_PIXELS: u64 = 1_150_000;

impl Image {
    /// What the image costs the model, in tokens (Anthropic's formula, which is also within a
    /// few percent of OpenAI's high-detail tiles at these sizes).
    pub fn tokens(&self) -> u64 {
        let pixels = (self.width as u64 * self.height as u64).min(MAX_COUNTED_PIXELS);
        pixels.div_ceil(PIXELS_PER_TOKEN).max(1)
    }

    /// `shot.png (1200×800 png)`, for notes and the transcript.
    pub fn describe(&self) -> String {
        let kind = self.media_type.strip_prefix("image/").unwrap_or(&self.media_type);
        let name = if self.source.is_empty() { "image" } else { self.source.as_str() };
        format!("{name} ({}×{} {kind})", self.width, self.height)
    }

    /// `data:image/png;base64,…`, as the OpenAI wires take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(width: u32, height: u32) -> Image {
        Image { media_type: "image/png".into(), data: "AAAA".into(), width, height, source: "shot.png".into() }
    }

    #[test]
    fn image_tokens_follow_the_pixel_count_up_to_the_cap() {
        assert_eq!(image(1000, 750).tokens(), 1000);
        assert_eq!(image(1, 1).tokens(), 1);
        // Past 1.15 MP the API scales down first: the cost stops growing.
        assert_eq!(image(4000, 3000).tokens(), 1534);
    }

    #[test]
    fn images_describe_themselves_and_make_data_urls() {
        let i = image(1200, 800);
        assert_eq!(i.describe(), "shot.png (1200×800 png)");
        assert_eq!(i.data_url(), "data:image/png;base64,AAAA");
    }
}
