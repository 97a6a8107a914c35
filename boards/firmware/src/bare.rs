//! The board alone: one log line and nothing else, so `cargo xtask size` can tell the
//! board's start-up, logging and panic handling from the runtime's share of `minimal`.

/// Logs that the board started.
pub fn run(board: &str) {
    say!("bare: {} started", board);
}
