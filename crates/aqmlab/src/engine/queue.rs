//! The event queue: events ordered by (time, [`TieBreak`]), where the tie-break
//! is derived from the model — the component the event belongs to and that
//! component's own event counter — not from the order in which events were
//! inserted. Events at one time therefore run in an order that does not
//! depend on which part of the model scheduled first, which is what lets a
//! partitioned (parallel) run reproduce a sequential one byte for byte.
//! Events are plain data of the caller's type `E` — no boxed closure per
//! event. Keys must be unique (a component never reuses a counter value).
//!
//! Two stores are merged on every pop, so the order is exactly that of one
//! heap:
//! - a binary min-heap for packet events (about one per busy link);
//! - a timing wheel for timers ([`EventQueue::schedule_timer`]), of which a
//!   simulation holds about one per flow: with 10⁵ flows a heap of timers is
//!   17 levels of cache misses per operation. The wheel (Varghese & Lauck,
//!   "Hashed and Hierarchical Timing Wheels", SOSP 1987, scheme 4 with an
//!   overflow list) has [`SLOTS`] slots of 2^[`SLOT_SHIFT`] ns (≈ 1.05 ms,
//!   4.3 s in all); a timer goes to the slot of its time, or to an overflow
//!   heap when it lies beyond the wheel's span. When the clock reaches a
//!   slot, the slot's timers are sorted by (time, sequence) once and drained
//!   in that order. Inserting and expiring a timer cost O(1) plus its share
//!   of one sort, whatever the number of pending timers.

use super::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of a wheel slot's width in nanoseconds.
pub const SLOT_SHIFT: u32 = 20;
/// Slots in the wheel.
pub const SLOTS: u64 = 4096;
/// Longest `ready` list a timer for the current slot is inserted into;
/// beyond it such a timer goes to the heap (2 in tests, so that the
/// property test below covers both ways).
#[cfg(not(test))]
const READY_INSERT_MAX: usize = 64;
#[cfg(test)]
const READY_INSERT_MAX: usize = 2;

/// The tie-break of events at one time: the owning component's id, then
/// its own counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TieBreak {
    pub owner: u64,
    pub seq: u64,
}

struct Entry<E> {
    // (time, owner, seq) in 8-byte fields: `BinaryHeap::pop` writes the
    // last entry into the root and reads it straight back, and a 16-byte
    // key written in halves cannot be store-forwarded (a stall on every pop)
    time: Time,
    owner: u64,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn new(at: Time, tie: TieBreak, ev: E) -> Self {
        Entry {
            time: at,
            owner: tie.owner,
            seq: tie.seq,
            ev,
        }
    }
    #[inline]
    fn full(&self) -> (Time, u64, u64) {
        (self.time, self.owner, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.full() == o.full()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.full().cmp(&self.full()) // reversed: BinaryHeap is a max-heap
    }
}

fn slot_of(time: Time) -> u64 {
    time >> SLOT_SHIFT
}

/// The timing wheel of timers.
struct Wheel<E> {
    /// Absolute slot number whose timers are in `ready`.
    cur: u64,
    /// Timers of slots ≤ `cur`, sorted by descending key (pop from the end).
    ready: Vec<Entry<E>>,
    /// `slots[s % SLOTS]`: unsorted timers of slot s, cur < s < cur + SLOTS.
    slots: Vec<Vec<Entry<E>>>,
    in_slots: usize,
    /// Timers of slots ≥ cur + SLOTS.
    overflow: BinaryHeap<Entry<E>>,
}

impl<E> Wheel<E> {
    fn new() -> Self {
        Wheel {
            cur: 0,
            ready: Vec::new(),
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            in_slots: 0,
            overflow: BinaryHeap::new(),
        }
    }

    fn len(&self) -> usize {
        self.ready.len() + self.in_slots + self.overflow.len()
    }

    #[inline]
    fn push(&mut self, e: Entry<E>) {
        let s = slot_of(e.time);
        if s <= self.cur {
            // descending order: insert before the first smaller key
            let i = self.ready.partition_point(|x| x.full() > e.full());
            self.ready.insert(i, e);
        } else if s < self.cur + SLOTS {
            self.slots[(s % SLOTS) as usize].push(e);
            self.in_slots += 1;
        } else {
            self.overflow.push(e);
        }
    }

    /// Make `ready` hold the earliest timers, if there are any.
    #[inline]
    fn refill(&mut self) {
        while self.ready.is_empty() {
            if self.in_slots == 0 {
                match self.overflow.peek() {
                    None => return,
                    // jump straight to the overflow's first slot
                    Some(e) => self.cur = slot_of(e.time) - 1,
                }
            }
            self.cur += 1;
            while let Some(e) = self.overflow.peek() {
                if slot_of(e.time) >= self.cur + SLOTS {
                    break;
                }
                let e = self.overflow.pop().expect("peeked");
                let s = slot_of(e.time);
                self.slots[(s % SLOTS) as usize].push(e);
                self.in_slots += 1;
            }
            let i = (self.cur % SLOTS) as usize;
            if !self.slots[i].is_empty() {
                std::mem::swap(&mut self.ready, &mut self.slots[i]);
                self.in_slots -= self.ready.len();
                self.ready
                    .sort_unstable_by_key(|e| std::cmp::Reverse(e.full()));
            }
        }
    }

    #[inline]
    fn peek_key(&mut self) -> Option<(Time, u64, u64)> {
        self.refill();
        self.ready.last().map(|e| e.full())
    }
}

/// A deterministic future-event list.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    wheel: Wheel<E>,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            wheel: Wheel::new(),
            popped: 0,
        }
    }

    /// Schedule `ev` at absolute time `at` with tie-break `tie`.
    #[inline]
    pub fn schedule(&mut self, at: Time, tie: TieBreak, ev: E) {
        self.heap.push(Entry::new(at, tie, ev));
    }

    /// Schedule a timer `ev` at absolute time `at`: the same order as
    /// [`EventQueue::schedule`], kept in the timing wheel.
    #[inline]
    pub fn schedule_timer(&mut self, at: Time, tie: TieBreak, ev: E) {
        let e = Entry::new(at, tie, ev);
        if slot_of(at) <= self.wheel.cur && self.wheel.ready.len() >= READY_INSERT_MAX {
            // A timer for the slot being drained goes into the sorted
            // `ready` list by insertion, O(len). When thousands of timers
            // share a slot (10⁵ flows started at one instant), the heap
            // takes it in O(log n) instead; pop merges both by key, so the
            // order is the same either way.
            self.heap.push(e);
        } else {
            self.wheel.push(e);
        }
    }

    /// Remove and return the earliest event (ties: the smaller [`TieBreak`]).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let w = self.wheel.peek_key();
        let h = self.heap.peek().map(|e| e.full());
        let e = match (h, w) {
            (Some(h), Some(w)) if w < h => self.wheel.ready.pop(),
            (Some(_), _) => self.heap.pop(),
            (None, Some(_)) => self.wheel.ready.pop(),
            (None, None) => None,
        }?;
        self.popped += 1;
        Some((e.time, e.ev))
    }

    /// The earliest pending event, without removing it (what the next
    /// [`EventQueue::pop`] returns). The simulation looks at it to load ahead
    /// the state that event will touch while it handles the current one.
    #[inline]
    pub fn peek(&mut self) -> Option<&E> {
        self.peek_entry().map(|(_, e)| e)
    }

    /// The earliest pending event and its key (time, owner, counter).
    #[inline]
    pub fn peek_entry(&mut self) -> Option<((Time, u64, u64), &E)> {
        let w = self.wheel.peek_key();
        let h = self.heap.peek().map(|e| e.full());
        let e = match (h, w) {
            (Some(h), Some(w)) if w < h => self.wheel.ready.last(),
            (Some(_), _) => self.heap.peek(),
            (None, Some(_)) => self.wheel.ready.last(),
            (None, None) => None,
        };
        e.map(|e| (e.full(), &e.ev))
    }

    /// The timer `k` places after the earliest one in the wheel's current
    /// slot (`k = 0`: the earliest), if the slot holds that many: a timer
    /// due soon, whose state the cache hints load a few events ahead.
    #[inline]
    pub fn timer_ahead(&self, k: usize) -> Option<&E> {
        let r = &self.wheel.ready;
        r.len().checked_sub(k + 1).map(|i| &r[i].ev)
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.peek_key().map(|k| k.0)
    }

    /// The key (time, owner, counter) of the earliest pending event: what
    /// a caller merging other sorted sources with this queue compares.
    #[inline]
    pub fn peek_key(&mut self) -> Option<(Time, u64, u64)> {
        self.peek_entry().map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.wheel.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events popped so far (the engine's event count).
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tie(owner: u64, seq: u64) -> TieBreak {
        TieBreak { owner, seq }
    }

    /// Time first, then the owner, then the owner's counter — whatever the
    /// insertion order.
    #[test]
    fn orders_by_time_then_owner_then_counter() {
        let mut q = EventQueue::new();
        q.schedule(5, tie(2, 0), "d");
        q.schedule(1, tie(1, 1), "b");
        q.schedule_timer(5, tie(1, 7), "c");
        q.schedule(1, tie(1, 0), "a");
        q.schedule(0, tie(9, 0), "z");
        q.schedule_timer(1, tie(3, 0), "b2");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["z", "a", "b", "b2", "c", "d"]);
        assert_eq!(q.popped(), 6);
    }

    /// Timers in the wheel and events in the heap pop in exactly the order
    /// one heap would give, across slots, wheel turns and the overflow.
    #[test]
    fn wheel_and_heap_merge_in_heap_order() {
        let mut q = EventQueue::new();
        let mut reference = std::collections::BinaryHeap::new();
        let mut rng = crate::engine::RngStream::new(1, 2);
        let mut now = 0u64;
        let mut seq = 0u64;
        let mut out = Vec::new();
        let mut expect = Vec::new();
        for step in 0..20_000u64 {
            // schedule 0..3 events at now + up to 10 s (beyond the wheel's
            // 4.3 s), some at exactly now, some in the current slot
            for _ in 0..(step % 4) {
                let d = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(1 << SLOT_SHIFT),
                    _ => rng.below(10_000_000_000),
                };
                let timer = rng.below(2) == 0;
                // owners in reverse of insertion: the order is the key's
                let owner = u64::MAX - seq / 3;
                if timer {
                    q.schedule_timer(now + d, tie(owner, seq), seq);
                } else {
                    q.schedule(now + d, tie(owner, seq), seq);
                }
                reference.push(std::cmp::Reverse((now + d, owner, seq)));
                seq += 1;
            }
            if step % 3 != 0 {
                if let Some((t, e)) = q.pop() {
                    now = t;
                    out.push((t, e));
                    let std::cmp::Reverse((t, _, s)) = reference.pop().unwrap();
                    expect.push((t, s));
                }
            }
        }
        while let Some(x) = q.pop() {
            out.push(x);
            let (t, _, s) = reference.pop().unwrap().0;
            expect.push((t, s));
        }
        assert_eq!(out.len() as u64, seq);
        assert_eq!(out, expect);
    }

    /// `peek` shows exactly the event the next `pop` returns, across the
    /// heap and the wheel.
    #[test]
    fn peek_is_the_next_pop() {
        let mut q = EventQueue::new();
        let mut rng = crate::engine::RngStream::new(3, 4);
        for i in 0..5_000u64 {
            let at = rng.below(3_000_000_000);
            // few owners: many ties at one time, broken by the counter
            let t = tie(rng.below(4), i);
            if rng.below(2) == 0 {
                q.schedule_timer(at, t, i);
            } else {
                q.schedule(at, t, i);
            }
        }
        while let Some(&e) = q.peek() {
            assert_eq!(q.pop().map(|(_, x)| x), Some(e));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn many_same_time_events_of_one_owner_keep_counter_order() {
        let mut q = EventQueue::new();
        for i in 0..10_000u32 {
            q.schedule(7, tie(4, i as u64), i);
        }
        for i in 0..10_000u32 {
            assert_eq!(q.pop(), Some((7, i)));
        }
    }

    /// One step of [`prop_matches_one_heap`].
    #[derive(Clone, Debug)]
    enum Op {
        /// Schedule at a time chosen by `kind` from `x` (see [`time_at`]),
        /// in the wheel or in the heap.
        Schedule {
            timer: bool,
            kind: u8,
            x: u64,
            owner: u64,
        },
        /// Pop up to this many events.
        Pop(u8),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (any::<bool>(), 0u8..7, any::<u64>(), 0u64..3).prop_map(
                |(timer, kind, x, owner)| Op::Schedule { timer, kind, x, owner }
            ),
            2 => (0u8..6).prop_map(Op::Pop),
        ]
    }

    /// A time at or after `now`: now itself, in its slot, within two
    /// nanoseconds of one of the next slot boundaries, anywhere in the
    /// wheel's span, within two nanoseconds of the span's end (the
    /// boundary between the slots and the overflow heap), or far beyond.
    fn time_at(now: u64, kind: u8, x: u64) -> u64 {
        let slot = 1u64 << SLOT_SHIFT;
        let span = slot * SLOTS;
        let edge = |first: u64| (first + (x % 3) * slot + (x >> 8) % 5).saturating_sub(2);
        match kind {
            0 => now,
            1 => now + x % slot,
            2 => edge((now / slot + 1) * slot),
            3 => now + x % span,
            4 => edge((now / slot + SLOTS) * slot),
            5 => edge((now / slot + SLOTS + 1) * slot),
            _ => now + x % (1 << 40),
        }
        .max(now)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 512,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Any interleaving of `schedule`, `schedule_timer` and `pop`
        /// gives the order of one binary heap keyed by (time, owner,
        /// counter), across slot boundaries, wheel turns and the overflow;
        /// `peek` is the next pop; `timer_ahead(k)`, when it answers, is
        /// the k-th earliest timer pending in the wheel, and after a peek
        /// it answers for k = 0 whenever one is (what the event loop's
        /// cache hints rely on).
        #[test]
        fn prop_matches_one_heap(ops in proptest::collection::vec(op(), 1..400)) {
            use std::cmp::Reverse;
            use std::collections::{BTreeSet, BinaryHeap};
            type Key = (u64, u64, u64);
            let mut q = EventQueue::new();
            let mut reference: BinaryHeap<Reverse<Key>> = BinaryHeap::new();
            let mut timers: BTreeSet<Key> = BTreeSet::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            let check_pop = |q: &mut EventQueue<u64>,
                             reference: &mut BinaryHeap<Reverse<Key>>,
                             timers: &mut BTreeSet<Key>,
                             now: &mut u64| {
                let peeked = q.peek().copied();
                let Some(Reverse(key)) = reference.pop() else {
                    proptest::prop_assert_eq!(peeked, None);
                    proptest::prop_assert_eq!(q.pop(), None);
                    return Ok(());
                };
                proptest::prop_assert_eq!(q.timer_ahead(0).is_some(), !timers.is_empty());
                for (k, t) in timers.iter().take(4).enumerate() {
                    if let Some(&e) = q.timer_ahead(k) {
                        proptest::prop_assert_eq!(e, t.2);
                    }
                }
                proptest::prop_assert_eq!(peeked, Some(key.2));
                proptest::prop_assert_eq!(q.peek_time(), Some(key.0));
                proptest::prop_assert_eq!(q.pop(), Some((key.0, key.2)));
                timers.remove(&key);
                *now = key.0;
                Ok(())
            };
            for o in ops {
                match o {
                    Op::Schedule { timer, kind, x, owner } => {
                        let at = time_at(now, kind, x);
                        let t = tie(owner, seq);
                        if timer {
                            let in_heap = q.heap.len();
                            q.schedule_timer(at, t, seq);
                            // `timers`: the timers kept in the wheel (a
                            // timer for a crowded current slot goes to
                            // the heap, which the hint does not see)
                            if q.heap.len() == in_heap {
                                timers.insert((at, owner, seq));
                            }
                        } else {
                            q.schedule(at, t, seq);
                        }
                        reference.push(Reverse((at, owner, seq)));
                        seq += 1;
                    }
                    Op::Pop(n) => {
                        for _ in 0..n {
                            check_pop(&mut q, &mut reference, &mut timers, &mut now)?;
                        }
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while !reference.is_empty() {
                check_pop(&mut q, &mut reference, &mut timers, &mut now)?;
            }
            proptest::prop_assert!(q.pop().is_none());
            proptest::prop_assert_eq!(q.popped(), seq);
        }
    }
}
