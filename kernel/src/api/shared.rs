use super::caller_site;
use super::run_cell::RunCell;
use crate::event::ValueKind;
use crate::op::Op;
use crate::port;

/// A shared variable whose every access is a scheduling point and an event
/// (`MEM(σ, m, a, t, L)` of racefuzzer-pldi08 §2.1).
///
/// Only one task runs at a time and each access completes before the next scheduling
/// point, so the value itself needs no atomics; the interesting interleavings are the ones
/// the scheduler chooses between accesses.
pub struct Shared<T: Copy> {
    value: RunCell<T>,
}

// SAFETY: the kernel runs exactly one task at a time (cooperative on the device, coroutines on
// one thread on the host port), and an access never spans a scheduling point.
unsafe impl<T: Copy + Send> Sync for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// A shared variable holding `value`.
    pub const fn new(value: T) -> Self {
        Shared {
            value: RunCell::new(value),
        }
    }

    fn addr(&self) -> u32 {
        port::addr(self as *const Self as *const ())
    }

    /// Reads the value (a READ statement).
    #[track_caller]
    pub fn read(&self) -> T {
        port::point(Op::Read {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: see the `Sync` impl: no other task runs until our next scheduling point.
        let value = unsafe { *self.value.get() };
        traced(&value);
        value
    }

    /// Writes the value (a WRITE statement).
    #[track_caller]
    pub fn write(&self, value: T) {
        port::point(Op::Write {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: as in `read`.
        unsafe { *self.value.get() = value }
        traced(&value);
    }

    /// Reads, transforms and writes the value as one statement (e.g. `x += 1`).
    #[track_caller]
    pub fn update(&self, f: impl FnOnce(T) -> T) -> T {
        port::point(Op::Update {
            s: caller_site(),
            a: self.addr(),
        });
        // SAFETY: as in `read`; `f` must not reach a scheduling point (it gets a copy).
        let new = unsafe {
            let new = f(*self.value.get());
            *self.value.get() = new;
            new
        };
        traced(&new);
        new
    }
}

/// At the full trace level, the value an access (of a `Shared` or an atomic) read, wrote or left, as an
/// [`crate::Event::Value`]: for the primitive types of at most 32 bits, the wire budget of
/// one event word (a struct's bytes may hold padding, which must not be read as a number).
/// Below the full trace level this costs the one flag test.
#[inline(always)]
pub(crate) fn traced<T: Copy>(value: &T) {
    if port::values_traced()
        && let Some((v, k)) = word(value)
    {
        port::value(v, k as u8);
    }
}

/// `value` as an event word and its kind, if `T` is such a primitive.
fn word<T: Copy>(value: &T) -> Option<(u32, ValueKind)> {
    if core::mem::size_of::<T>() > 4 {
        return None;
    }
    let p = (value as *const T).cast::<u8>();
    // SAFETY: each arm reads the `T` at `p` as the very type its name says `T` is.
    unsafe fn read<U: Copy>(p: *const u8) -> U {
        unsafe { p.cast::<U>().read_unaligned() }
    }
    unsafe {
        Some(match core::any::type_name::<T>() {
            "u8" => (u32::from(read::<u8>(p)), ValueKind::Unsigned),
            "u16" => (u32::from(read::<u16>(p)), ValueKind::Unsigned),
            "u32" => (read::<u32>(p), ValueKind::Unsigned),
            "usize" => (read::<usize>(p) as u32, ValueKind::Unsigned),
            "i8" => (read::<i8>(p) as i32 as u32, ValueKind::Signed),
            "i16" => (read::<i16>(p) as i32 as u32, ValueKind::Signed),
            "i32" => (read::<i32>(p) as u32, ValueKind::Signed),
            "isize" => (read::<isize>(p) as u32, ValueKind::Signed),
            "bool" => (u32::from(read::<bool>(p)), ValueKind::Bool),
            "char" => (u32::from(read::<char>(p)), ValueKind::Char),
            "f32" => (read::<f32>(p).to_bits(), ValueKind::F32),
            _ => return None,
        })
    }
}
