//! From defmt frames (device) or text lines (host port) to typed events.
//!
//! `defmt-decoder` does not expose typed argument values, so each frame is identified by
//! its format string's literal pieces and its rendered text is parsed back with the kernel's
//! own template matcher ([`EventKind::parse`]). Frames that are no Jostle event (the firmware's
//! own `defmt` logs) are kept as log lines.

use crate::error::JostleError;
use crate::trace::elf::SiteLoc;
use defmt_decoder::{DecodeError, Encoding, Table};
use defmt_parser::Fragment;
use jostle_kernel::Event;
use jostle_kernel::event::{EventKind, side};
use std::collections::HashMap;

/// One decoded item of a run's stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A kernel event.
    Event(Event),
    /// A site definition.
    Site(u32, SiteLoc),
    /// The message of the panic that follows.
    PanicMessage(String),
    /// Any other frame or line (the firmware's own logs).
    Log(String),
}

/// What a frame's format string is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Known {
    Event(EventKind),
    Site,
    PanicMessage,
    Other,
}

/// A format string's literal pieces, with `\0` where a parameter stands.
fn signature_of_format(format: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in format.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push('\0');
            }
            '}' => in_param = false,
            c if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}

fn signature_of_fragments(fragments: &[Fragment<'_>]) -> String {
    let mut out = String::new();
    for f in fragments {
        match f {
            Fragment::Literal(text) => out.push_str(text),
            Fragment::Parameter(_) => out.push('\0'),
        }
    }
    out
}

fn known_signatures() -> HashMap<String, Known> {
    let mut map: HashMap<String, Known> = EventKind::ALL
        .iter()
        .map(|k| (signature_of_format(k.format()), Known::Event(*k)))
        .collect();
    map.insert(signature_of_format(side::SITE), Known::Site);
    map.insert(
        signature_of_format(side::PANIC_MESSAGE),
        Known::PanicMessage,
    );
    map
}

/// Parses the rendered text of a site definition: `J site <id> <file>:<line>:<col>`.
/// The file may itself contain `:` (a Windows drive), so line and column are taken from
/// the right.
pub fn parse_site(text: &str) -> Option<(u32, SiteLoc)> {
    let rest = text.strip_prefix("J site ")?;
    let (id, loc) = rest.split_once(' ')?;
    let mut parts = loc.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?.to_owned();
    Some((id.parse().ok()?, SiteLoc { file, line, col }))
}

/// Maps one rendered line of the host port (or a frame's text) to an item.
pub fn parse_line(line: &str) -> Item {
    if line.starts_with("J site ")
        && let Some((id, loc)) = parse_site(line)
    {
        return Item::Site(id, loc);
    }
    if let Some(msg) = line.strip_prefix("J panic-msg ") {
        return Item::PanicMessage(msg.to_owned());
    }
    for kind in EventKind::ALL {
        if let Some(ev) = kind.parse(line) {
            return Item::Event(ev);
        }
    }
    Item::Log(line.to_owned())
}

/// Decodes a device's whole defmt byte stream.
pub struct FrameDecoder<'t> {
    table: &'t Table,
    known: HashMap<String, Known>,
    by_index: HashMap<u64, Known>,
}

/// The outcome of decoding a stream: the items, and how the stream ended.
#[derive(Debug)]
pub struct Decoded {
    /// Everything decoded, in order.
    pub items: Vec<Item>,
    /// Set when the stream stopped in the middle of a frame or could not be decoded.
    pub error: Option<JostleError>,
    /// Frames decoded.
    pub frames: usize,
}

impl<'t> FrameDecoder<'t> {
    /// A decoder for streams of the firmware whose table is `table`.
    pub fn new(table: &'t Table) -> Self {
        FrameDecoder {
            table,
            known: known_signatures(),
            by_index: HashMap::new(),
        }
    }

    /// Decodes `bytes`, the complete output of one boot.
    pub fn decode_all(&mut self, bytes: &[u8]) -> Decoded {
        let mut stream = self.table.new_stream_decoder();
        // rzCOBS frames end with a zero byte: the decoder gets one frame at a time, so its
        // buffer stays one frame long (it drains each decoded frame from the front of its
        // buffer, which over a whole stream at once takes time quadratic in its length).
        let framed = self.table.encoding() == Encoding::Rzcobs;
        let mut rest = bytes;
        let mut items = Vec::new();
        let mut frames = 0;
        let error = loop {
            let decoded = stream.decode();
            if matches!(decoded, Err(DecodeError::UnexpectedEof)) && !rest.is_empty() {
                let cut = match rest.iter().position(|b| *b == 0) {
                    Some(zero) if framed => zero + 1,
                    _ => rest.len(),
                };
                stream.received(&rest[..cut]);
                rest = &rest[cut..];
                continue;
            }
            match decoded {
                Ok(frame) => {
                    frames += 1;
                    let known = *self.by_index.entry(frame.index()).or_insert_with(|| {
                        self.known
                            .get(&signature_of_fragments(&frame.fragments()))
                            .copied()
                            .unwrap_or(Known::Other)
                    });
                    let text = frame.display_message().to_string();
                    let item = match known {
                        Known::Event(kind) => match kind.parse(&text) {
                            Some(ev) => Item::Event(ev),
                            None => {
                                break Some(JostleError::StreamCorrupt(format!(
                                    "frame {frames} `{text}` does not fit its format `{}`",
                                    kind.format()
                                )));
                            }
                        },
                        Known::Site => match parse_site(&text) {
                            Some((id, loc)) => Item::Site(id, loc),
                            None => {
                                break Some(JostleError::StreamCorrupt(format!(
                                    "frame {frames}: bad site definition `{text}`"
                                )));
                            }
                        },
                        Known::PanicMessage => Item::PanicMessage(
                            text.strip_prefix("J panic-msg ")
                                .unwrap_or(&text)
                                .to_owned(),
                        ),
                        Known::Other => Item::Log(text),
                    };
                    items.push(item);
                }
                Err(DecodeError::UnexpectedEof) => {
                    break if bytes.last().is_some_and(|b| *b != 0) {
                        // rzCOBS frames end with a zero byte: data after the last one is a
                        // frame cut short.
                        Some(JostleError::StreamTruncated(format!(
                            "the stream ends inside a frame after {frames} frames"
                        )))
                    } else {
                        None
                    };
                }
                Err(DecodeError::Malformed) => {
                    break Some(JostleError::StreamCorrupt(format!(
                        "malformed frame after {frames} good frames"
                    )));
                }
            }
        };
        Decoded {
            items,
            error,
            frames,
        }
    }
}

/// Finds the frames that start a run (`RunStart`) in a growing rzCOBS stream as it
/// arrives, for the limits of each run of a boot of several: each complete frame is
/// unpacked once to read its format index, and a whole frame is decoded only the first
/// time its index is seen.
pub struct RunStarts<'t> {
    table: &'t Table,
    signature: String,
    /// Format index → whether it is `RunStart`'s.
    known: HashMap<u16, bool>,
    /// Bytes before this offset are whole frames already looked at.
    checked: usize,
    frame: Vec<u8>,
}

impl<'t> RunStarts<'t> {
    /// A scanner of streams of the firmware whose table is `table`; `None` when the stream
    /// is not rzCOBS-framed (frames cannot be told apart without decoding them all).
    pub fn new(table: &'t Table) -> Option<RunStarts<'t>> {
        (table.encoding() == Encoding::Rzcobs).then(|| RunStarts {
            table,
            signature: signature_of_format(EventKind::RunStart.format()),
            known: HashMap::new(),
            checked: 0,
            frame: Vec::new(),
        })
    }

    /// Looks at the complete frames of `bytes` (the stream so far; it only grows) not seen
    /// yet, and returns the offsets of the ones that start a run, in order.
    pub fn scan(&mut self, bytes: &[u8]) -> Vec<usize> {
        let mut found = Vec::new();
        let Some(new) = bytes.get(self.checked..) else {
            return found;
        };
        let mut at = self.checked;
        for piece in new.split_inclusive(|b| *b == 0) {
            let Some((0, body)) = piece.split_last().map(|(z, b)| (*z, b)) else {
                break; // the frame is not complete yet
            };
            if !body.is_empty() && self.is_run_start(body) {
                found.push(at);
            }
            at += piece.len();
        }
        self.checked = at;
        found
    }

    fn is_run_start(&mut self, body: &[u8]) -> bool {
        if !rzcobs_decode(body, &mut self.frame) || self.frame.len() < 2 {
            return false;
        }
        let index = u16::from_le_bytes([self.frame[0], self.frame[1]]);
        if let Some(known) = self.known.get(&index) {
            return *known;
        }
        let is = self
            .table
            .decode(&self.frame)
            .is_ok_and(|(frame, _)| signature_of_fragments(&frame.fragments()) == self.signature);
        self.known.insert(index, is);
        is
    }
}

/// Unpacks one rzCOBS frame (without its zero byte) into `out`; false if it is malformed.
fn rzcobs_decode(data: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut data = data.iter().rev().copied();
    while let Some(x) = data.next() {
        match x {
            0 => return false,
            0x01..=0x7f => {
                for i in 0..7 {
                    if x & (1 << (6 - i)) == 0 {
                        let Some(b) = data.next() else { return false };
                        out.push(b);
                    } else {
                        out.push(0);
                    }
                }
            }
            0x80..=0xfe => {
                out.push(0);
                for _ in 0..(x & 0x7f) + 7 {
                    let Some(b) = data.next() else { return false };
                    out.push(b);
                }
            }
            0xff => {
                for _ in 0..134 {
                    let Some(b) = data.next() else { return false };
                    out.push(b);
                }
            }
        }
    }
    out.reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_definitions_parse_from_the_right() {
        assert_eq!(
            parse_site("J site 7 C:\\src\\a.rs:12:5"),
            Some((
                7,
                SiteLoc {
                    file: "C:\\src\\a.rs".into(),
                    line: 12,
                    col: 5
                }
            ))
        );
        assert_eq!(parse_site("J site x a.rs:1:2"), None);
    }

    #[test]
    fn every_event_line_parses() {
        for ev in Event::samples() {
            let mut text = String::new();
            ev.render(&mut text).unwrap();
            assert_eq!(parse_line(&text), Item::Event(ev));
        }
        assert_eq!(parse_line("hello"), Item::Log("hello".into()));
    }

    #[test]
    fn signatures_are_distinct() {
        let sigs = known_signatures();
        assert_eq!(sigs.len(), EventKind::ALL.len() + 2);
    }
}
