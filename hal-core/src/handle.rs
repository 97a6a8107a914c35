//! Generation-checked handles into fixed-capacity tables.
//!
//! Drivers keep every object (buffers, semaphores, command buffers, executables) in a
//! [`Table`] whose capacity is a const generic, so no heap is needed. A [`Handle`] names a
//! slot *and* the generation of the object in it: once the object is released the slot's
//! generation moves on, and the old handle is refused with [`Error::StaleHandle`] instead of
//! reaching whatever took the slot next.

use crate::Error;
use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};

/// The kind of object a handle names; gives tables their name in errors.
pub trait Kind {
    /// The object kind, as errors print it ("buffer", "semaphore", …).
    const NAME: &'static str;
}

/// A reference to an object in a driver's table: slot index and generation.
pub struct Handle<K> {
    index: u32,
    generation: u32,
    kind: PhantomData<fn() -> K>,
}

impl<K> Handle<K> {
    /// A handle from its parts (drivers and tests; a forged handle is simply refused).
    pub const fn from_parts(index: u32, generation: u32) -> Self {
        Self {
            index,
            generation,
            kind: PhantomData,
        }
    }

    /// The slot index.
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation of the object the handle was made for.
    pub const fn generation(self) -> u32 {
        self.generation
    }
}

impl<K> Clone for Handle<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Handle<K> {}
impl<K> PartialEq for Handle<K> {
    fn eq(&self, other: &Self) -> bool {
        (self.index, self.generation) == (other.index, other.generation)
    }
}
impl<K> Eq for Handle<K> {}
impl<K> core::hash::Hash for Handle<K> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (self.index, self.generation).hash(state);
    }
}
impl<K: Kind> fmt::Debug for Handle<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}.{}", K::NAME, self.index, self.generation)
    }
}
#[cfg(feature = "defmt")]
impl<K: Kind> defmt::Format for Handle<K> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "{=str}#{=u32}.{=u32}",
            K::NAME,
            self.index,
            self.generation
        )
    }
}

/// The end of the free list. Links store `index + 1`, so that an empty table is all zero
/// bytes (a `static` device's tables then land in `.bss`, not in flash).
const NO_SLOT: u32 = 0;

/// Whether a slot (or a handle made for one) with generation `generation` holds a value.
#[inline(always)]
const fn is_live(generation: u32) -> bool {
    generation & 1 == 1
}

/// One entry of a [`Table`]: a value and the generation that says whether it is there.
pub struct Slot<T> {
    /// Odd while the slot holds a value, even while it is free: bumped when a value is
    /// inserted and again when it is removed. An empty table's slots are generation 0.
    generation: u32,
    /// The next freed slot, as `index + 1`, or [`NO_SLOT`].
    next_free: u32,
    /// Initialized exactly while `generation` is odd.
    value: MaybeUninit<T>,
}

impl<T> Slot<T> {
    /// A free slot, all zero bytes.
    pub const EMPTY: Self = Self {
        generation: 0,
        next_free: NO_SLOT,
        value: MaybeUninit::zeroed(),
    };
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        if core::mem::needs_drop::<T>() && is_live(self.generation) {
            self.generation = self.generation.wrapping_add(1);
            // SAFETY: the generation was odd, so the value is initialized; it is now marked
            // free and never read again.
            unsafe { self.value.assume_init_drop() };
        }
    }
}

/// A table of objects addressed by [`Handle`]s, over the slots `S`: `[Slot<T>; N]` in a
/// [`Table`] (its capacity in its type), `[Slot<T>]` in a [`TableView`] (its capacity in
/// the slice; a `&mut Table` coerces to a `&mut TableView`, so code over a view serves
/// every capacity with one copy).
///
/// Invariants: a slot holds a value exactly when its generation is odd, and then it is not
/// on the free list; a slot's generation changes every time a value is inserted or removed,
/// so at most one live handle matches it. Insert, get and remove are O(1), and a lookup is
/// one comparison of the handle's generation with the slot's (plus the handle's parity).
///
/// An empty table is all zero bytes (generation 0, no links, zeroed value storage), so a
/// `static` holding one built from a `const` empty value lands in `.bss`. The values are
/// kept as `MaybeUninit<T>` with the generation's parity as the tag, rather than in an enum
/// such as [`ZeroOption`](crate::zeroed::ZeroOption) whose `None` is zero: that tag byte,
/// written and copied apart from the value, made every insert, lookup and removal slower (a
/// `queue_alloca` + `queue_dealloca` pair 10 ns slower on the host, a semaphore-ordered pair
/// 14 ns).
pub struct TableOf<K, T, S: ?Sized> {
    /// Head of the list of freed slots, as `index + 1`, or [`NO_SLOT`].
    free_head: u32,
    /// Slots at or past this index have never been used.
    untouched: u32,
    len: u32,
    kind: PhantomData<fn() -> (K, T)>,
    slots: S,
}

/// A table of `N` objects, its capacity in its type.
pub type Table<K, T, const N: usize> = TableOf<K, T, [Slot<T>; N]>;

/// A table whose capacity is not in its type: what a `&mut Table<K, T, N>` coerces to.
pub type TableView<K, T> = TableOf<K, T, [Slot<T>]>;

impl<K: Kind, T, const N: usize> Default for Table<K, T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, T, const N: usize> Table<K, T, N> {
    /// An empty table.
    pub const fn new() -> Self {
        Self {
            free_head: NO_SLOT,
            untouched: 0,
            len: 0,
            kind: PhantomData,
            slots: [const { Slot::EMPTY }; N],
        }
    }
}

impl<K, T, const N: usize> Deref for Table<K, T, N> {
    type Target = TableView<K, T>;

    #[inline(always)]
    fn deref(&self) -> &TableView<K, T> {
        self
    }
}

impl<K, T, const N: usize> DerefMut for Table<K, T, N> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut TableView<K, T> {
        self
    }
}

impl<K: Kind, T> TableView<K, T> {
    /// How many objects the table can hold.
    #[inline(always)]
    pub const fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many objects it holds now.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it holds none.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores `value`; [`Error::TableFull`] when every slot is taken.
    #[inline]
    pub fn insert(&mut self, value: T) -> Result<Handle<K>, Error> {
        let index = if self.free_head != NO_SLOT {
            let index = self.free_head - 1;
            self.free_head = self.slots[index as usize].next_free;
            index
        } else if (self.untouched as usize) < self.slots.len() {
            self.untouched += 1;
            self.untouched - 1
        } else {
            return Err(Error::TableFull {
                table: K::NAME,
                capacity: self.slots.len() as u32,
            });
        };
        let slot = &mut self.slots[index as usize];
        // The slot is free (even generation): its storage holds no value to drop.
        slot.value.write(value);
        slot.generation = slot.generation.wrapping_add(1);
        slot.next_free = NO_SLOT;
        self.len += 1;
        Ok(Handle::from_parts(index, slot.generation))
    }

    fn stale(handle: Handle<K>) -> Error {
        Error::StaleHandle {
            kind: K::NAME,
            index: handle.index,
        }
    }

    /// The object `handle` names, or [`Error::StaleHandle`].
    #[inline]
    pub fn get(&self, handle: Handle<K>) -> Result<&T, Error> {
        match self.slots.get(handle.index as usize) {
            Some(slot) if slot.generation == handle.generation && is_live(handle.generation) => {
                // SAFETY: the slot's generation is odd, so its value is initialized.
                Ok(unsafe { slot.value.assume_init_ref() })
            }
            _ => Err(Self::stale(handle)),
        }
    }

    /// The object `handle` names, mutably, or [`Error::StaleHandle`].
    #[inline]
    pub fn get_mut(&mut self, handle: Handle<K>) -> Result<&mut T, Error> {
        match self.slots.get_mut(handle.index as usize) {
            Some(slot) if slot.generation == handle.generation && is_live(handle.generation) => {
                // SAFETY: the slot's generation is odd, so its value is initialized.
                Ok(unsafe { slot.value.assume_init_mut() })
            }
            _ => Err(Self::stale(handle)),
        }
    }

    /// Removes and returns the object; `handle` and every copy of it go stale.
    #[inline]
    pub fn remove(&mut self, handle: Handle<K>) -> Result<T, Error> {
        let free_head = self.free_head;
        let slot = match self.slots.get_mut(handle.index as usize) {
            Some(slot) if slot.generation == handle.generation && is_live(handle.generation) => {
                slot
            }
            _ => return Err(Self::stale(handle)),
        };
        slot.generation = slot.generation.wrapping_add(1);
        slot.next_free = free_head;
        // SAFETY: the generation was odd, so the value is initialized; it is now even (the
        // slot is free), so this value is never read or dropped again.
        let value = unsafe { slot.value.assume_init_read() };
        self.free_head = handle.index + 1;
        self.len -= 1;
        Ok(value)
    }

    /// Removes every object for which `keep` is false (their handles go stale).
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        if self.len == 0 {
            return;
        }
        for index in 0..self.untouched {
            let slot = &mut self.slots[index as usize];
            if !is_live(slot.generation) {
                continue;
            }
            // SAFETY: odd generation: the value is initialized.
            if keep(unsafe { slot.value.assume_init_ref() }) {
                continue;
            }
            slot.generation = slot.generation.wrapping_add(1);
            slot.next_free = self.free_head;
            self.free_head = index + 1;
            self.len -= 1;
            // SAFETY: it was initialized (odd generation) and the slot is now marked free, so
            // it is dropped once and never read again.
            unsafe { slot.value.assume_init_drop() };
        }
    }

    /// Every live object with its handle.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<K>, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| is_live(s.generation))
            .map(|(i, s)| {
                // SAFETY: odd generation (the filter above): the value is initialized.
                let value = unsafe { s.value.assume_init_ref() };
                (Handle::from_parts(i as u32, s.generation), value)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Thing {}
    impl Kind for Thing {
        const NAME: &'static str = "thing";
    }

    #[test]
    fn stale_handles_are_refused_after_reuse() {
        let mut t = Table::<Thing, u32, 2>::new();
        let a = t.insert(1).unwrap();
        let b = t.insert(2).unwrap();
        assert_eq!(
            t.insert(3),
            Err(Error::TableFull {
                table: "thing",
                capacity: 2
            })
        );
        assert_eq!(t.remove(a), Ok(1));
        assert!(matches!(t.get(a), Err(Error::StaleHandle { .. })));
        let c = t.insert(3).unwrap();
        assert_eq!(c.index(), a.index());
        assert!(
            t.get(a).is_err(),
            "old handle must not reach the new object"
        );
        assert_eq!(t.get(c), Ok(&3));
        assert_eq!(
            t.remove(a),
            Err(Error::StaleHandle {
                kind: "thing",
                index: a.index()
            })
        );
        assert_eq!(*t.get_mut(b).unwrap(), 2);
        assert_eq!(t.len(), 2);
        assert_eq!(t.iter().count(), 2);
        assert!(t.get(Handle::from_parts(7, 0)).is_err());
        t.retain(|&v| v != 3);
        assert!(t.get(c).is_err());
        assert_eq!(t.len(), 1);
        let d = t.insert(4).unwrap();
        assert_eq!(d.index(), c.index());
        assert_eq!(t.get(d), Ok(&4));
    }

    /// Values are dropped exactly once: when removed (by the caller), when `retain` drops
    /// them, or with the table; free slots (even generations) are never read, even by a
    /// handle that forges their generation.
    #[test]
    fn values_drop_once_and_free_slots_stay_unreadable() {
        use core::cell::Cell;
        struct Counted<'a>(&'a Cell<u32>, u32);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let drops = Cell::new(0);
        {
            let mut t = Table::<Thing, Counted<'_>, 4>::new();
            assert!(t.get(Handle::from_parts(0, 0)).is_err());
            let a = t.insert(Counted(&drops, 1)).unwrap();
            let b = t.insert(Counted(&drops, 2)).unwrap();
            let c = t.insert(Counted(&drops, 3)).unwrap();
            assert_eq!(a.generation() % 2, 1);
            assert_eq!(t.get(b).map(|v| v.1), Ok(2));
            let removed = t.remove(a).unwrap();
            assert_eq!((removed.1, drops.get()), (1, 0));
            drop(removed);
            assert_eq!(drops.get(), 1);
            // The freed slot's generation is even now: no handle reaches it.
            let freed = Handle::from_parts(a.index(), a.generation() + 1);
            assert!(t.get(freed).is_err());
            assert!(t.remove(freed).is_err());
            t.retain(|v| v.1 != 2);
            assert_eq!((drops.get(), t.len()), (2, 1));
            assert!(t.get(b).is_err());
            assert_eq!(
                t.iter()
                    .map(|(h, v)| (h, v.1))
                    .collect::<heapless::Vec<_, 4>>(),
                [(c, 3)]
            );
            *t.get_mut(c).map(|v| &mut v.1).unwrap() = 30;
            let d = t.insert(Counted(&drops, 4)).unwrap();
            assert_eq!(d.index(), b.index());
        }
        // The two left in the table went with it.
        assert_eq!(drops.get(), 4);
    }
}
