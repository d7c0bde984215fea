//! A cheaply re-armable, cancellable timer (RTO, delayed ACK).
//!
//! Re-arming a timer to a *later* deadline — what a TCP sender does on every
//! ACK — costs no heap operation: only the deadline field changes. When the
//! one scheduled event fires early, the owner re-schedules it for the current
//! deadline. Cancelling just clears the deadline. Only arming to an *earlier*
//! time than the scheduled event pushes a new event; the old one is recognised
//! as stale when it pops (its time no longer equals `scheduled`).

use super::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Slot,
    scheduled: Slot,
}

/// An optional time in 8 bytes (`t + 1`, 0 for none), so that a timer is
/// 16 bytes rather than 32: a sender holds three and a receiver one, and
/// with 10⁵ flows their cache lines are what an event waits for. The one
/// time it cannot hold, `Time::MAX` (584 years), is held as `Time::MAX − 1`:
/// both lie beyond any run's end, where a timer never fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot(Option<std::num::NonZeroU64>);

impl Slot {
    const NONE: Slot = Slot(None);
    #[inline]
    fn at(t: Time) -> Slot {
        Slot(std::num::NonZeroU64::new(t.min(Time::MAX - 1) + 1))
    }
    #[inline]
    fn get(self) -> Option<Time> {
        self.0.map(|v| v.get() - 1)
    }
}

/// What the owner must do after asking the timer something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Nothing to schedule.
    None,
    /// Schedule the timer's event at this time.
    Schedule(Time),
}

impl Timer {
    /// Arm (or re-arm) the timer to fire at `at`.
    #[inline]
    pub fn arm(&mut self, at: Time) -> TimerAction {
        let at = at.min(Time::MAX - 1); // see `Slot`
        self.deadline = Slot::at(at);
        match self.scheduled.get() {
            Some(s) if s <= at => TimerAction::None,
            _ => {
                self.scheduled = Slot::at(at);
                TimerAction::Schedule(at)
            }
        }
    }

    /// Cancel the timer; a pending event will be ignored or re-used later.
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = Slot::NONE;
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.0.is_some()
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline.get()
    }

    /// Called when an event for this timer pops at `now`. Returns `(fire,
    /// action)`: `fire` is true when the timer really expires now.
    #[inline]
    pub fn on_event(&mut self, now: Time) -> (bool, TimerAction) {
        if self.scheduled.get() != Some(now) {
            return (false, TimerAction::None); // stale event
        }
        self.scheduled = Slot::NONE;
        match self.deadline.get() {
            None => (false, TimerAction::None),
            Some(d) if d <= now => {
                self.deadline = Slot::NONE;
                (true, TimerAction::None)
            }
            Some(d) => {
                self.scheduled = Slot::at(d);
                (false, TimerAction::Schedule(d))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rearm_later_needs_no_new_event_and_fires_at_new_deadline() {
        let mut t = Timer::default();
        assert_eq!(t.arm(100), TimerAction::Schedule(100));
        assert_eq!(t.arm(150), TimerAction::None);
        assert_eq!(t.on_event(100), (false, TimerAction::Schedule(150)));
        assert_eq!(t.on_event(150), (true, TimerAction::None));
        assert!(!t.is_armed());
    }

    #[test]
    fn rearm_earlier_schedules_and_old_event_is_stale() {
        let mut t = Timer::default();
        t.arm(100);
        assert_eq!(t.arm(50), TimerAction::Schedule(50));
        assert_eq!(t.on_event(50), (true, TimerAction::None));
        assert_eq!(t.on_event(100), (false, TimerAction::None));
    }

    /// 16 bytes, and every time a run can reach round-trips (the largest
    /// one is held as `Time::MAX - 1`, beyond any run's end).
    #[test]
    fn compact_and_exact() {
        assert_eq!(std::mem::size_of::<Timer>(), 16);
        for t in [0, 1, 12_345, Time::MAX / 2, Time::MAX - 1] {
            let mut x = Timer::default();
            assert_eq!(x.arm(t), TimerAction::Schedule(t));
            assert_eq!(x.deadline(), Some(t));
            assert_eq!(x.on_event(t), (true, TimerAction::None));
        }
        let mut x = Timer::default();
        assert_eq!(x.arm(Time::MAX), TimerAction::Schedule(Time::MAX - 1));
        assert_eq!(x.deadline(), Some(Time::MAX - 1));
    }

    #[test]
    fn cancelled_timer_does_not_fire() {
        let mut t = Timer::default();
        t.arm(10);
        t.cancel();
        assert_eq!(t.on_event(10), (false, TimerAction::None));
        // re-arm after the stale pop works
        assert_eq!(t.arm(20), TimerAction::Schedule(20));
        assert_eq!(t.on_event(20), (true, TimerAction::None));
    }
}
