//! Integration tests of the engine's parts against the real OS: a real
//! `timerfd`, real child processes.

mod channels;
mod edits;
mod engine;
mod sync;
mod wall_timer;
mod workdays;
