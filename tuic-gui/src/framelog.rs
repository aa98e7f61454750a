//! Frame and keystroke timings for the figures, written only when `TUIC_GUI_FRAME_LOG` names a
//! file: one `frame interval_us=.. build_us=.. cpu_us=..` line per frame, and one
//! `key_to_pixel_us=..` line when the echo of a keystroke is first painted.

use std::collections::VecDeque;
use std::io::Write as _;
use std::time::{Duration, Instant};

/// Keystrokes waiting for their echo; older ones are dropped (a key that never echoes).
const PENDING_KEYS: usize = 64;
/// A keystroke not echoed within this is not counted.
const ECHO_GIVE_UP: Duration = Duration::from_secs(5);

pub(crate) struct FrameLog {
    out: std::io::BufWriter<std::fs::File>,
    last_frame: Option<Instant>,
    /// Keystrokes sent: when, and the grid's byte cursor at the time.
    pending: VecDeque<(Instant, u64)>,
}

impl FrameLog {
    pub(crate) fn from_env() -> Option<Self> {
        let path = std::env::var_os("TUIC_GUI_FRAME_LOG")?;
        let file = std::fs::File::create(path).ok()?;
        Some(Self { out: std::io::BufWriter::new(file), last_frame: None, pending: VecDeque::new() })
    }

    pub(crate) fn frame(&mut self, started: Instant, cpu_usage: Option<f32>) {
        let now = Instant::now();
        let interval = self.last_frame.map(|t| now.duration_since(t).as_micros()).unwrap_or(0);
        self.last_frame = Some(now);
        let cpu = cpu_usage.map(|s| (s * 1e6) as u64).unwrap_or(0);
        let _ = writeln!(
            self.out,
            "frame interval_us={interval} build_us={} cpu_us={cpu}",
            now.duration_since(started).as_micros()
        );
    }

    pub(crate) fn key_sent(&mut self, at_cursor: u64, sent: Instant) {
        if self.pending.len() == PENDING_KEYS {
            self.pending.pop_front();
        }
        self.pending.push_back((sent, at_cursor));
    }

    /// The frame being built paints the grid up to `cursor`: every keystroke sent before that
    /// output arrived is echoed on screen now.
    pub(crate) fn painted(&mut self, cursor: u64) {
        let now = Instant::now();
        while let Some(&(sent, at)) = self.pending.front() {
            if now.duration_since(sent) > ECHO_GIVE_UP {
                self.pending.pop_front();
            } else if cursor > at {
                self.pending.pop_front();
                let _ = writeln!(self.out, "key_to_pixel_us={}", now.duration_since(sent).as_micros());
            } else {
                break;
            }
        }
        let _ = self.out.flush();
    }
}
