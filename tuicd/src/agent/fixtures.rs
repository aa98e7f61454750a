//! Replays the recorded screens under `tuicd/tests/fixtures/agents/` through the real tracker.
