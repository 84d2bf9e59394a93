//! The frame scheduler: anything that changes what is on screen asks for a frame; requests
//! coalesce, and frames are drawn at most every `min_interval` (60 fps), so a burst of tokens
//! costs one redraw, and an idle screen costs none. What the user typed is drawn at once: the
//! cap is for streamed output, never for input.
//!
//! Background threads (the file index, the syntax warm-up) ask through a [`FrameRequester`].

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// At most this often: 60 frames a second.
pub const MIN_FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

#[derive(Debug)]
pub struct FrameScheduler {
    min_interval: Duration,
    last_draw: Option<Instant>,
    due: Option<Instant>,
}

impl FrameScheduler {
    pub fn new(min_interval: Duration) -> FrameScheduler {
        FrameScheduler { min_interval, last_draw: None, due: None }
    }

    /// A frame as soon as the rate cap allows.
    pub fn request(&mut self, now: Instant) {
        self.request_at(now);
    }

    /// A frame at `at` (or later, if the cap says so); the earliest request wins.
    pub fn request_at(&mut self, at: Instant) {
        let earliest = self.last_draw.map(|t| t + self.min_interval).map_or(at, |e| e.max(at));
        self.due = Some(self.due.map_or(earliest, |d| d.min(earliest)));
    }

    /// A frame now, whatever the cap says: the user's own input.
    pub fn request_now(&mut self, now: Instant) {
        self.due = Some(self.due.map_or(now, |d| d.min(now)));
    }

    /// When the next frame is due, if one is wanted.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    pub fn is_due(&self, now: Instant) -> bool {
        self.due.is_some_and(|d| d <= now)
    }

    pub fn drawn(&mut self, now: Instant) {
        self.last_draw = Some(now);
        self.due = None;
    }
}

/// A handle other threads use to ask for a frame.
#[derive(Clone, Debug)]
pub struct FrameRequester(mpsc::UnboundedSender<()>);

impl FrameRequester {
    pub fn new() -> (FrameRequester, mpsc::UnboundedReceiver<()>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (FrameRequester(tx), rx)
    }

    pub fn request(&self) {
        // The loop may have ended; then nobody needs the frame.
        let _ = self.0.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_of_requests_coalesce_into_one_capped_frame() {
        let t0 = Instant::now();
        let mut s = FrameScheduler::new(Duration::from_millis(16));
        assert_eq!(s.due(), None, "no request, no frame");
        s.request(t0);
        assert!(s.is_due(t0));
        s.drawn(t0);
        for i in 0..100 {
            s.request(t0 + Duration::from_micros(i * 10));
        }
        assert_eq!(s.due(), Some(t0 + Duration::from_millis(16)), "a burst waits for the cap");
        assert!(!s.is_due(t0 + Duration::from_millis(5)));
        s.drawn(t0 + Duration::from_millis(16));
        assert_eq!(s.due(), None);
    }

    #[test]
    fn input_is_drawn_at_once_even_right_after_a_frame() {
        let t0 = Instant::now();
        let mut s = FrameScheduler::new(Duration::from_millis(16));
        s.request(t0);
        s.drawn(t0);
        // Streamed output waits for the cap; a key typed 1 ms after the frame does not.
        s.request(t0 + Duration::from_millis(1));
        assert!(!s.is_due(t0 + Duration::from_millis(1)));
        s.request_now(t0 + Duration::from_millis(1));
        assert!(s.is_due(t0 + Duration::from_millis(1)));
    }

    #[test]
    fn the_earliest_timed_request_wins() {
        let t0 = Instant::now();
        let mut s = FrameScheduler::new(Duration::from_millis(16));
        s.request_at(t0 + Duration::from_millis(100));
        s.request_at(t0 + Duration::from_millis(40));
        assert_eq!(s.due(), Some(t0 + Duration::from_millis(40)));
    }
}
