//! Typed ids. A simulation is split into logical processes ([`LpId`]), each
//! holding the links and flows of its nodes in its own tables, so a link and
//! a flow have a global id (the same whatever the partition; it names them
//! in the results and orders their events) and a local index into the table
//! of the process that holds it. Mixing the two is a type error.

/// A simplex link direction, by its position in the scenario's expansion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A logical process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LpId(pub u16);

/// A link's index in one logical process's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalLink(pub u32);

/// A flow's index in one logical process's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalFlow(pub u32);

/// "Not held by this logical process" in a global-to-local map.
pub const ABSENT: u32 = u32::MAX;

impl LinkId {
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl LocalLink {
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl LocalFlow {
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl LpId {
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}

/// Global flow id → local index in one logical process (or [`ABSENT`]).
/// In a sequential run every flow's record sits at its id's position, and
/// once [`FlowIx::seal`] has seen that the table is not read: with 10⁵
/// flows each read is a cache miss per packet delivered.
pub struct FlowIx {
    ix: Vec<u32>,
    /// `ix[i] == i` for every `i` (checked by `seal`, kept by `set`).
    identity: bool,
}

impl FlowIx {
    /// A table of `n` flows, none held.
    pub fn new(n: usize) -> FlowIx {
        FlowIx {
            ix: vec![ABSENT; n],
            identity: false,
        }
    }

    /// The local index of global flow `f`, or [`ABSENT`].
    #[inline]
    pub fn get(&self, f: crate::net::packet::FlowId) -> u32 {
        match self.ix.get(f.ix()) {
            Some(_) if self.identity => f.0,
            Some(&i) => i,
            None => ABSENT,
        }
    }

    /// Flow `f` is held at local index `lf`.
    pub fn set(&mut self, f: crate::net::packet::FlowId, lf: LocalFlow) {
        if self.ix.len() <= f.ix() {
            // a gap of flows not held here ends the identity
            self.identity &= self.ix.len() == f.ix();
            self.ix.resize(f.ix() + 1, ABSENT);
        }
        self.identity &= lf.0 == f.0;
        self.ix[f.ix()] = lf.0;
    }

    /// Every flow is placed: use the identity from now on if it holds.
    pub fn seal(&mut self) {
        self.identity = (self.ix.iter().enumerate()).all(|(i, &x)| x as usize == i);
    }
}
