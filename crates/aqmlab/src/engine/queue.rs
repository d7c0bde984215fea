//! The event queue: a binary min-heap keyed by (time, insertion sequence), so
//! events at the same time run in the order they were scheduled (as ns-3's
//! `DefaultSimulatorImpl` orders by (timestamp, uid)). Events are plain data of
//! the caller's type `E` — no boxed closure per event.

use super::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    key: u128, // time << 64 | seq: one integer comparison per heap step
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
        o.key.cmp(&self.key) // reversed: BinaryHeap is a max-heap
    }
}

/// A deterministic future-event list.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
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
            seq: 0,
            popped: 0,
        }
    }

    /// Schedule `ev` at absolute time `at`.
    #[inline]
    pub fn schedule(&mut self, at: Time, ev: E) {
        let key = ((at as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, ev });
    }

    /// Remove and return the earliest event (ties: first scheduled first).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|e| {
            self.popped += 1;
            ((e.key >> 64) as Time, e.ev)
        })
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events popped so far (the engine's event count).
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(5, "c");
        q.schedule(1, "a");
        q.schedule(5, "d");
        q.schedule(1, "b");
        q.schedule(0, "z");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["z", "a", "b", "c", "d"]);
        assert_eq!(q.popped(), 5);
    }

    #[test]
    fn many_same_time_events_keep_fifo_order() {
        let mut q = EventQueue::new();
        for i in 0..10_000u32 {
            q.schedule(7, i);
        }
        for i in 0..10_000u32 {
            assert_eq!(q.pop(), Some((7, i)));
        }
    }
}
