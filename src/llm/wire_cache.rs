//! What a message looks like on the wire, remembered from one request to the next. A session's
//! messages do not change once sent — a rewrite (dedup, pruning, compaction) makes a new
//! message — so each is serialised once, not once per request: a request costs the same to
//! build at 100k tokens as at 2k.
//!
//! Keyed by the message's identity (its `Arc`): the entry holds a clone of that `Arc`, so the
//! allocation, and with it the key, cannot be reused by another message while the entry lives.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::conversation::Message;

/// Requests an entry may go unused before it is dropped: an auxiliary request in between (a
/// compaction's, through the same client) must not throw away the conversation's entries.
const KEEP_FOR_REQUESTS: u64 = 3;

#[derive(Debug)]
pub(crate) struct WireCache<V> {
    entries: HashMap<usize, Entry<V>>,
    request: u64,
    /// What else the wire forms depend on (the model, whether it takes images, the caching
    /// mode): when it changes, every entry is made anew.
    context: String,
}

#[derive(Debug)]
struct Entry<V> {
    message: Arc<Message>,
    value: V,
    used: u64,
}

impl<V> Default for WireCache<V> {
    fn default() -> Self {
        WireCache { entries: HashMap::new(), request: 0, context: String::new() }
    }
}

impl<V: Clone> WireCache<V> {
    /// Start a request; [`WireCache::end`] drops what recent requests did not use.
    pub fn begin(&mut self) {
        self.request += 1;
    }

    /// [`WireCache::begin`], for wire forms that depend on `context` too.
    pub fn begin_with(&mut self, context: &str) {
        if self.context != context {
            self.entries.clear();
            self.context = context.to_string();
        }
        self.begin();
    }

    /// The form of `message`, made by `make` the first time it is asked for.
    pub fn get(&mut self, message: &Arc<Message>, make: impl FnOnce(&Message) -> V) -> V {
        let request = self.request;
        let entry = self.entries.entry(Arc::as_ptr(message) as usize).or_insert_with(|| Entry {
            message: message.clone(),
            value: make(message),
            used: request,
        });
        debug_assert!(Arc::ptr_eq(&entry.message, message), "a live entry's key is never reused");
        entry.used = request;
        entry.value.clone()
    }

    pub fn end(&mut self) {
        let request = self.request;
        self.entries.retain(|_, e| request - e.used < KEEP_FOR_REQUESTS);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The start of a request body, `{"model":"NAME"`, written into `buf` (emptied first) with
/// room reserved for `size` bytes in all: every wire's body opens the same way.
pub(crate) fn body_start(mut buf: Vec<u8>, size: usize, model: &str) -> String {
    buf.clear();
    // Empty, so valid UTF-8.
    let mut out = String::from_utf8(buf).unwrap_or_default();
    out.reserve(size);
    out.push_str("{\"model\":");
    out.push_str(&serde_json::Value::String(model.to_string()).to_string());
    out
}

/// The buffer request bodies are written into, handed back when the body is dropped (sent):
/// a body of a long session is hundreds of kilobytes, and a fresh one per request costs a
/// reallocation and a page fault per 4 KiB before a byte is written.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpareBuffer(Arc<Mutex<Vec<u8>>>);

impl SpareBuffer {
    /// An empty buffer, with the capacity the last body needed when it has come back.
    pub fn take(&self) -> Vec<u8> {
        let mut buf = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        buf.clear();
        buf
    }

    /// `buf` as a body that returns it here once sent.
    pub fn body(&self, buf: Vec<u8>) -> bytes::Bytes {
        bytes::Bytes::from_owner(Returning { buf, home: self.clone() })
    }
}

struct Returning {
    buf: Vec<u8>,
    home: SpareBuffer,
}

impl AsRef<[u8]> for Returning {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        let mut spare = self.home.0.lock().unwrap_or_else(|p| p.into_inner());
        if spare.capacity() < self.buf.capacity() {
            *spare = std::mem::take(&mut self.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_made_once_and_dropped_once_unused() {
        let mut cache: WireCache<String> = WireCache::default();
        let a = Arc::new(Message::user("a"));
        let b = Arc::new(Message::user("b"));
        let made = std::cell::Cell::new(0);
        let make = |m: &Message| {
            made.set(made.get() + 1);
            m.text()
        };
        cache.begin();
        assert_eq!(cache.get(&a, make), "a");
        assert_eq!(cache.get(&b, make), "b");
        cache.end();
        for _ in 0..KEEP_FOR_REQUESTS {
            cache.begin();
            assert_eq!(cache.get(&a, make), "a");
            cache.end();
        }
        assert_eq!(made.get(), 2, "each made once");
        assert_eq!(cache.len(), 1, "b went unused long enough to go");
        // Same text, another message: made anew.
        cache.begin();
        cache.get(&Arc::new(Message::user("a")), make);
        assert_eq!(made.get(), 3);
    }

    #[test]
    fn a_new_context_makes_every_form_anew() {
        let mut cache: WireCache<String> = WireCache::default();
        let a = Arc::new(Message::user("a"));
        cache.begin_with("model-1");
        assert_eq!(cache.get(&a, |_| "one".to_string()), "one");
        cache.end();
        cache.begin_with("model-1");
        assert_eq!(cache.get(&a, |_| "two".to_string()), "one", "same context: remembered");
        cache.end();
        cache.begin_with("model-2");
        assert_eq!(cache.get(&a, |_| "three".to_string()), "three");
    }

    #[test]
    fn a_sent_body_gives_its_buffer_back() {
        let spare = SpareBuffer::default();
        let mut buf = spare.take();
        buf.extend_from_slice(&[7; 100_000]);
        let body = spare.body(buf);
        assert_eq!(body.len(), 100_000);
        assert_eq!(spare.take().capacity(), 0, "not back while the body lives");
        drop(body);
        let again = spare.take();
        assert!(again.is_empty() && again.capacity() >= 100_000);
    }
}
