//! Fixed-capacity containers: a vector, a small map and a string, stored inline.
//!
//! Why the kernel has its own instead of using `heapless`: the `portable-atomic` shim
//! (`shims/portable-atomic`) depends on this kernel, and a firmware that builds heapless with
//! its `portable-atomic` feature makes heapless depend on the shim. Were the kernel to
//! depend on heapless too, Cargo would see a cycle (kernel → heapless → portable-atomic →
//! kernel) and refuse the build. So the kernel depends on no crate that may use
//! portable-atomic.
//!
//! Only what the kernel and the host tools use is here. The unsafe code of the vector is
//! fenced in this module: elements `0..len` are initialised, the rest are not.

use core::fmt;
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};

/// A vector of at most `N` elements, stored inline.
pub struct Vec<T, const N: usize> {
    len: usize,
    items: [MaybeUninit<T>; N],
}

impl<T, const N: usize> Vec<T, N> {
    /// An empty vector.
    pub const fn new() -> Self {
        Vec {
            len: 0,
            items: [const { MaybeUninit::uninit() }; N],
        }
    }

    /// Appends `item`; gives it back when the vector is full.
    pub fn push(&mut self, item: T) -> Result<(), T> {
        if self.len == N {
            return Err(item);
        }
        self.items[self.len].write(item);
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the last element.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: element `len` was initialised and is no longer counted as such.
        Some(unsafe { self.items[self.len].assume_init_read() })
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        while self.pop().is_some() {}
    }

    /// Removes element `i`, moving the last one into its place.
    pub fn swap_remove(&mut self, i: usize) -> T {
        let last = self.len - 1;
        // Not onto itself: a swap of one element with itself is a call to `memmove`.
        if i != last {
            self.swap(i, last);
        }
        self.pop().expect("not empty")
    }
}

impl<T: Clone, const N: usize> Vec<T, N> {
    /// A vector holding `items`; `Err` when there are more than `N`.
    #[allow(clippy::result_unit_err)]
    pub fn from_slice(items: &[T]) -> Result<Self, ()> {
        let mut v = Self::new();
        v.extend_from_slice(items)?;
        Ok(v)
    }

    /// Appends `items`; `Err` (and nothing appended) when they do not fit.
    #[allow(clippy::result_unit_err)]
    pub fn extend_from_slice(&mut self, items: &[T]) -> Result<(), ()> {
        if self.len + items.len() > N {
            return Err(());
        }
        for item in items {
            let _ = self.push(item.clone());
        }
        Ok(())
    }
}

impl<T, const N: usize> Deref for Vec<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: elements `0..len` are initialised.
        unsafe { core::slice::from_raw_parts(self.items.as_ptr().cast(), self.len) }
    }
}

impl<T, const N: usize> DerefMut for Vec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: elements `0..len` are initialised.
        unsafe { core::slice::from_raw_parts_mut(self.items.as_mut_ptr().cast(), self.len) }
    }
}

impl<T, const N: usize> Drop for Vec<T, N> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<T, const N: usize> Default for Vec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone, const N: usize> Clone for Vec<T, N> {
    fn clone(&self) -> Self {
        let mut v = Self::new();
        for item in self.iter() {
            let _ = v.push(item.clone());
        }
        v
    }
}

impl<T: fmt::Debug, const N: usize> fmt::Debug for Vec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq, const N: usize> PartialEq for Vec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq, const N: usize> Eq for Vec<T, N> {}

impl<T, const N: usize> FromIterator<T> for Vec<T, N> {
    /// Collects at most `N` items; more is a bug of the caller (as `heapless` does, it
    /// panics rather than dropping some silently).
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        v.extend(iter);
        v
    }
}

impl<T, const N: usize> Extend<T> for Vec<T, N> {
    /// Appends the items; more than fit is a bug of the caller (it panics, as in `collect`).
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for item in iter {
            if self.push(item).is_err() {
                panic!("more than {N} items in a fixed::Vec");
            }
        }
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a Vec<T, N> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(feature = "serde")]
impl<T: serde::Serialize, const N: usize> serde::Serialize for Vec<T, N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(feature = "serde")]
impl<'de, T: serde::Deserialize<'de>, const N: usize> serde::Deserialize<'de> for Vec<T, N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = std::vec::Vec::<T>::deserialize(d)?;
        let n = items.len();
        let mut v = Self::new();
        for item in items {
            if v.push(item).is_err() {
                return Err(serde::de::Error::invalid_length(
                    n,
                    &format!("at most {N} items").as_str(),
                ));
            }
        }
        Ok(v)
    }
}

/// A map of at most `N` entries, searched linearly (the kernel's maps are small).
pub struct LinearMap<K, V, const N: usize> {
    entries: Vec<(K, V), N>,
}

impl<K: PartialEq, V, const N: usize> LinearMap<K, V, N> {
    /// An empty map.
    pub const fn new() -> Self {
        LinearMap {
            entries: Vec::new(),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    /// Sets the value of `key`, returning the previous one; gives the entry back when the
    /// map is full.
    pub fn insert(&mut self, key: K, value: V) -> Result<Option<V>, (K, V)> {
        if let Some((_, v)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            return Ok(Some(core::mem::replace(v, value)));
        }
        self.entries.push((key, value)).map(|()| None)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.swap_remove(i).1)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The entries, in no particular order (insertion order until a removal).
    pub fn iter(&self) -> impl Iterator<Item = &(K, V)> {
        self.entries.iter()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K: PartialEq, V, const N: usize> Default for LinearMap<K, V, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A string of at most `N` bytes; writes past the end are cut at a character boundary.
pub struct String<const N: usize> {
    len: usize,
    bytes: [u8; N],
}

impl<const N: usize> String<N> {
    /// An empty string.
    pub const fn new() -> Self {
        String {
            len: 0,
            bytes: [0; N],
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // `write_str` only ever copies whole characters.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl<const N: usize> Default for String<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for String<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = N - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            Err(fmt::Error)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn vec_holds_at_most_n_and_drops_what_it_holds() {
        let mut v: Vec<std::rc::Rc<u8>, 2> = Vec::new();
        let one = std::rc::Rc::new(1);
        assert!(v.push(one.clone()).is_ok());
        assert!(v.push(one.clone()).is_ok());
        assert!(v.push(one.clone()).is_err());
        assert_eq!(std::rc::Rc::strong_count(&one), 3);
        assert_eq!(v.len(), 2);
        drop(v);
        assert_eq!(std::rc::Rc::strong_count(&one), 1);
    }

    #[test]
    fn vec_from_slice_refuses_too_many_and_keeps_order() {
        assert!(Vec::<u32, 2>::from_slice(&[1, 2, 3]).is_err());
        let mut v = Vec::<u32, 4>::from_slice(&[1, 2, 3]).unwrap();
        assert_eq!(&*v, &[1, 2, 3]);
        assert_eq!(v.swap_remove(0), 1);
        assert_eq!(&*v, &[3, 2]);
        assert!(v.extend_from_slice(&[7, 8, 9]).is_err());
        assert_eq!(&*v, &[3, 2], "nothing appended when the items do not fit");
        assert_eq!(v.clone(), v);
    }

    #[test]
    fn map_inserts_replaces_and_removes() {
        let mut m: LinearMap<u32, u8, 2> = LinearMap::new();
        assert_eq!(m.insert(5, 1), Ok(None));
        assert_eq!(m.insert(5, 2), Ok(Some(1)));
        assert_eq!(m.insert(6, 3), Ok(None));
        assert_eq!(m.insert(7, 4), Err((7, 4)));
        assert_eq!(m.get(&5), Some(&2));
        assert_eq!(m.remove(&5), Some(2));
        assert!(!m.contains_key(&5));
        assert_eq!(m.get(&6), Some(&3));
    }

    #[test]
    fn string_cuts_at_a_character_boundary() {
        let mut s = String::<4>::new();
        assert!(write!(s, "ab").is_ok());
        assert!(write!(s, "cé").is_err());
        assert_eq!(s.as_str(), "abc");
    }
}
