//! A tiny trace builder for the tests.
#![allow(dead_code)]

use jostle_kernel::event::Event;

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
