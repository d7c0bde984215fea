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
