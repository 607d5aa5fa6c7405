//! A tiny trace builder for the tests.
#![allow(dead_code)]

use jostle_kernel::event::Event;

/// The context id of source `i`'s handler.
pub fn h(i: u8) -> u8 {
    jostle_kernel::event::IRQ_CONTEXT + i
}

/// Builds a trace event by event. Lock `l` has class `l` unless given.
#[derive(Default)]
pub struct Trace {
    pub events: Vec<Event>,
}

impl Trace {
    pub fn new() -> Self {
        Self::default()
    }
    fn push(&mut self, e: Event) -> &mut Self {
        self.events.push(e);
        self
    }
    pub fn start(&mut self, t: u8) -> &mut Self {
        self.push(Event::TaskStart { t })
    }
    pub fn spawn(&mut self, t: u8, child: u8) -> &mut Self {
        self.push(Event::Spawn { t, child, s: 0 })
    }
    pub fn exit(&mut self, t: u8) -> &mut Self {
        self.push(Event::TaskExit { t })
    }
    pub fn join(&mut self, t: u8, child: u8) -> &mut Self {
        self.push(Event::Join { t, child, s: 0 })
    }
    pub fn read(&mut self, t: u8, s: u32, a: u32) -> &mut Self {
        self.push(Event::Read { t, s, a })
    }
    pub fn write(&mut self, t: u8, s: u32, a: u32) -> &mut Self {
        self.push(Event::Write { t, s, a })
    }
    pub fn update(&mut self, t: u8, s: u32, a: u32) -> &mut Self {
        self.push(Event::Update { t, s, a })
    }
    pub fn lock(&mut self, t: u8, s: u32, l: u32) -> &mut Self {
        self.push(Event::Acquire { t, s, l, c: l })
    }
    pub fn lock_class(&mut self, t: u8, s: u32, l: u32, c: u32) -> &mut Self {
        self.push(Event::Acquire { t, s, l, c })
    }
    pub fn unlock(&mut self, t: u8, s: u32, l: u32) -> &mut Self {
        self.push(Event::Release { t, s, l })
    }
    pub fn atomic(&mut self, t: u8, s: u32) -> &mut Self {
        self.push(Event::AtomicEnter { t, s })
    }
    pub fn end_atomic(&mut self, t: u8, s: u32) -> &mut Self {
        self.push(Event::AtomicExit { t, s })
    }
    pub fn signal(&mut self, t: u8, s: u32, g: u32) -> &mut Self {
        self.push(Event::Signal { t, s, g })
    }
    pub fn wait(&mut self, t: u8, s: u32, g: u32) -> &mut Self {
        self.push(Event::Wait { t, s, g })
    }
    pub fn frame(&mut self, t: u8, s: u32) -> &mut Self {
        self.push(Event::FrameEnter { t, s })
    }
    pub fn end_frame(&mut self, t: u8, s: u32) -> &mut Self {
        self.push(Event::FrameExit { t, s })
    }
    pub fn cs(&mut self, t: u8) -> &mut Self {
        self.push(Event::CsEnter { t })
    }
    pub fn end_cs(&mut self, t: u8) -> &mut Self {
        self.push(Event::CsExit { t })
    }
    pub fn load(&mut self, t: u8, s: u32, a: u32, o: u8) -> &mut Self {
        self.push(Event::AtomicLoad { t, s, a, o })
    }
    pub fn store(&mut self, t: u8, s: u32, a: u32, o: u8) -> &mut Self {
        self.push(Event::AtomicStore { t, s, a, o })
    }
    pub fn rmw(&mut self, t: u8, s: u32, a: u32, o: u8) -> &mut Self {
        self.push(Event::AtomicRmw { t, s, a, o })
    }
    pub fn cas_failed(&mut self, t: u8, s: u32, a: u32, o: u8) -> &mut Self {
        self.push(Event::CasFailed { t, s, a, o })
    }
    /// Handler of source `i` (context `h(i)`), priority `p`, preempting `by`, begins.
    pub fn irq(&mut self, i: u8, p: u8, by: u8) -> &mut Self {
        self.push(Event::IrqEnter {
            t: h(i),
            i,
            p,
            by,
            f: 0,
        })
    }
    pub fn end_irq(&mut self, i: u8) -> &mut Self {
        self.push(Event::IrqExit { t: h(i) })
    }
    pub fn request(&mut self, t: u8, s: u32, i: u8) -> &mut Self {
        self.push(Event::IrqRequest { t, s, i })
    }
    /// `IrqMask { on: 1 }`: disables source `i` (0xFF: all).
    pub fn mask(&mut self, t: u8, s: u32, i: u8) -> &mut Self {
        self.push(Event::IrqMask { t, s, i, on: 1 })
    }
    /// `IrqMask { on: 0 }`: enables source `i` (0xFF: all).
    pub fn unmask(&mut self, t: u8, s: u32, i: u8) -> &mut Self {
        self.push(Event::IrqMask { t, s, i, on: 0 })
    }
    pub fn prio(&mut self, t: u8, s: u32, level: u8) -> &mut Self {
        self.push(Event::PrioMask { t, s, level, r: 0 })
    }
    /// Main task 0 starts and spawns tasks 1..=n (each starts right away).
    pub fn main_spawning(n: u8) -> Self {
        let mut tr = Self::new();
        tr.start(0);
        for c in 1..=n {
            tr.spawn(0, c).start(c);
        }
        tr
    }
    pub fn build(&self) -> Vec<Event> {
        self.events.clone()
    }
}
