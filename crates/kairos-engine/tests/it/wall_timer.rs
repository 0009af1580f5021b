//! The wall timer fires at the real-time deadline, not before, and at once
//! for a deadline in the past; a clock change wakes it. A change is provoked
//! by setting the real-time clock to the value it already has (needs
//! CAP_SYS_TIME), which cancels every such timer on the machine: the tests
//! that do it take [`CLOCK`] for writing, the ones that expect a deadline
//! for reading, so they never run at the same time.

use std::time::Duration as StdDuration;

use chrono::{Duration, Utc};
use kairos_engine::wake::{Wake, WallTimer};

static CLOCK: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Sets the real-time clock to the value it already has: a clock change for
/// every `TFD_TIMER_CANCEL_ON_SET` timer, while the machine's time moves by
/// microseconds at most. Needs CAP_SYS_TIME (tests and CI run as root here).
/// Linux only: elsewhere the timer is the bounded recheck, which only sees a
/// change that moves the clock by more than `wake::JUMP`.
#[cfg(target_os = "linux")]
fn set_the_clock() {
    use nix::time::{ClockId, clock_gettime, clock_settime};
    let now = clock_gettime(ClockId::CLOCK_REALTIME).expect("clock");
    clock_settime(ClockId::CLOCK_REALTIME, now)
        .expect("setting the clock needs root (CAP_SYS_TIME)");
}

#[tokio::test]
async fn fires_at_the_deadline_and_not_before() {
    let _clock = CLOCK.read().await;
    let mut timer = WallTimer::new().expect("timer");
    for _ in 0..5 {
        #[allow(clippy::disallowed_methods)]
        let deadline = Utc::now() + Duration::milliseconds(40);
        let woke = tokio::time::timeout(StdDuration::from_secs(5), timer.sleep_until(deadline))
            .await
            .expect("fires within 5 s")
            .expect("timer works");
        #[allow(clippy::disallowed_methods)]
        let now = Utc::now();
        assert_eq!(woke, Wake::Deadline);
        assert!(now >= deadline, "woke {} early", deadline - now);
        assert!(
            now - deadline < Duration::milliseconds(200),
            "woke {} late",
            now - deadline
        );
    }
}

#[tokio::test]
async fn a_deadline_in_the_past_fires_at_once() {
    let _clock = CLOCK.read().await;
    let mut timer = WallTimer::new().expect("timer");
    #[allow(clippy::disallowed_methods)]
    let past = Utc::now() - Duration::hours(1);
    let woke = tokio::time::timeout(StdDuration::from_secs(1), timer.sleep_until(past))
        .await
        .expect("at once");
    assert_eq!(woke.expect("timer works"), Wake::Deadline);
    let epoch = chrono::DateTime::from_timestamp(0, 0).expect("epoch");
    let woke = tokio::time::timeout(StdDuration::from_secs(1), timer.sleep_until(epoch))
        .await
        .expect("at once");
    assert_eq!(
        woke.expect("timer works"),
        Wake::Deadline,
        "the epoch is not 'disarm'"
    );
}

#[tokio::test]
async fn rearming_replaces_the_previous_deadline() {
    let _clock = CLOCK.read().await;
    let mut timer = WallTimer::new().expect("timer");
    #[allow(clippy::disallowed_methods)]
    let far = Utc::now() + Duration::hours(1);
    // Start a long wait, abandon it, and arm a short one on the same timer.
    let _ = tokio::time::timeout(StdDuration::from_millis(20), timer.sleep_until(far)).await;
    #[allow(clippy::disallowed_methods)]
    let near = Utc::now() + Duration::milliseconds(30);
    let woke = tokio::time::timeout(StdDuration::from_secs(5), timer.sleep_until(near))
        .await
        .expect("near fires");
    assert_eq!(woke.expect("timer works"), Wake::Deadline);
}

/// Setting the real-time clock cancels the timer, and the engine hears about
/// it at once instead of sleeping on a stale plan.
// `timerfd`: cancelled by a clock change (Linux only, see `set_the_clock`).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_clock_change_wakes_the_timer_at_once() {
    let _clock = CLOCK.write().await;
    let mut timer = WallTimer::new().expect("timer");
    #[allow(clippy::disallowed_methods)]
    let far = Utc::now() + Duration::hours(1);
    timer.arm(far).expect("armed");
    set_the_clock();
    let woke = tokio::time::timeout(StdDuration::from_secs(5), timer.wait())
        .await
        .expect("woken within 5 s");
    assert_eq!(woke.expect("timer works"), Wake::ClockChanged);
}

/// A clock change while the engine is busy (armed, but not waiting), then a
/// re-arm: the kernel reports ECANCELED from the re-arm, and arms the timer
/// anyway. That must not be an error (it stopped the daemon), and the next
/// wait must say the clock changed.
// `timerfd`: cancelled by a clock change (Linux only, see `set_the_clock`).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_clock_change_before_a_re_arm_is_reported_by_the_next_wait() {
    let _clock = CLOCK.write().await;
    let mut timer = WallTimer::new().expect("timer");
    #[allow(clippy::disallowed_methods)]
    let far = Utc::now() + Duration::hours(1);
    timer.arm(far).expect("armed");
    set_the_clock();
    timer
        .arm(far + Duration::minutes(1))
        .expect("re-arming after a clock change is not an error");
    let woke = tokio::time::timeout(StdDuration::from_secs(5), timer.wait())
        .await
        .expect("at once");
    assert_eq!(woke.expect("timer works"), Wake::ClockChanged);
    // And the re-arm took: a near deadline fires.
    #[allow(clippy::disallowed_methods)]
    let near = Utc::now() + Duration::milliseconds(30);
    timer.arm(near).expect("armed");
    let woke = tokio::time::timeout(StdDuration::from_secs(5), timer.wait())
        .await
        .expect("fires");
    assert_eq!(woke.expect("timer works"), Wake::Deadline);
}
