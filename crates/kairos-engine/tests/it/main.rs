//! Integration tests of the engine's parts against the real OS: a real
//! `timerfd`, real child processes.

mod channels;
mod concurrent;
mod crash_window;
mod edits;
mod engine;
mod escalation;
mod feeds;
mod preview;
mod replace;
mod shown;
mod support;
mod sync;
mod sync_caldav;
mod sync_zone;
mod tasks;
mod wall_timer;
mod workdays;
