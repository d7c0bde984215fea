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
    deadline: Option<Time>,
    scheduled: Option<Time>,
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
        self.deadline = Some(at);
        match self.scheduled {
            Some(s) if s <= at => TimerAction::None,
            _ => {
                self.scheduled = Some(at);
                TimerAction::Schedule(at)
            }
        }
    }

    /// Cancel the timer; a pending event will be ignored or re-used later.
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Called when an event for this timer pops at `now`. Returns `(fire,
    /// action)`: `fire` is true when the timer really expires now.
    #[inline]
    pub fn on_event(&mut self, now: Time) -> (bool, TimerAction) {
        if self.scheduled != Some(now) {
            return (false, TimerAction::None); // stale event
        }
        self.scheduled = None;
        match self.deadline {
            None => (false, TimerAction::None),
            Some(d) if d <= now => {
                self.deadline = None;
                (true, TimerAction::None)
            }
            Some(d) => {
                self.scheduled = Some(d);
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
