//! From defmt frames (device) or text lines (host port) to typed events.
//!
//! `defmt-decoder` does not expose typed argument values, so the first frame of each format
//! index is identified by its format string's literal pieces and its rendered text is parsed
//! back with the kernel's own template matcher ([`EventKind::parse`]). Later frames of an
//! index that is a Jostle event's (fixed-width integer arguments only) skip defmt-decoder:
//! their rzCOBS frame is unpacked here and the arguments read straight from its bytes
//! ([`EventKind::from_values`]), about thirty times faster, with the same results. Frames
//! that are no Jostle event (the firmware's own `defmt` logs) are kept as log lines.

use crate::error::JostleError;
use crate::trace::elf::SiteLoc;
use defmt_decoder::{DecodeError, Encoding, Frame, Table};
use defmt_parser::{Fragment, Type};
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
    /// Where the host port's location `id` lies: bytes from its anchor static (`J addr`).
    Location(u32, i64),
    /// The message of the panic that follows.
    PanicMessage(String),
    /// Any other frame or line (the firmware's own logs).
    Log(String),
    /// What the application printed on QEMU's standard output (`hprintln!`, a panic
    /// handler's message) while its frames went to a channel of their own.
    AppOutput(String),
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
    if let Some(rest) = line.strip_prefix("J addr ")
        && let Some((id, offset)) = rest.split_once(' ')
        && let (Ok(id), Ok(offset)) = (id.parse(), offset.parse())
    {
        return Item::Location(id, offset);
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
    /// Format index → how its frames become items, filled in as each index is first met
    /// (through defmt-decoder, which is the only way to see an index's format string).
    by_index: Vec<Option<Reading>>,
    /// The frame being unpacked, kept to reuse its allocation.
    frame: Vec<u8>,
}

/// How the frames of one format index become items.
#[derive(Clone, Copy, Debug)]
enum Reading {
    /// A Jostle event whose arguments are all fixed-width integers: they are read straight
    /// from the frame's bytes, with no text in between.
    Fields(EventKind, Widths),
    /// Anything else: decoded and rendered by defmt-decoder, the text parsed back.
    Rendered(Known),
}

/// The byte widths of an event's arguments, in format order (little-endian on the wire).
#[derive(Clone, Copy, Debug)]
struct Widths {
    len: usize,
    bytes: [usize; MAX_FIELDS],
}

/// The most fields an event has (the kernel's `Event::values` holds as many).
const MAX_FIELDS: usize = 8;

impl Widths {
    /// The widths of `fragments`' parameters when every one is a fixed-width unsigned
    /// integer shown in plain decimal, in argument order; `None` otherwise (strings, slices,
    /// display hints, explicit argument positions), so that defmt-decoder handles those.
    fn of(fragments: &[Fragment<'_>]) -> Option<Widths> {
        let mut widths = Widths {
            len: 0,
            bytes: [0; MAX_FIELDS],
        };
        for param in fragments.iter().filter_map(|f| match f {
            Fragment::Parameter(p) => Some(p),
            Fragment::Literal(_) => None,
        }) {
            if param.index != widths.len || param.hint.is_some() {
                return None;
            }
            let width = match param.ty {
                Type::U8 => 1,
                Type::U16 => 2,
                Type::U32 => 4,
                Type::U64 => 8,
                _ => return None,
            };
            *widths.bytes.get_mut(widths.len)? = width;
            widths.len += 1;
        }
        Some(widths)
    }

    /// Reads the arguments that follow a frame's format index; `None` when the frame is too
    /// short (defmt-decoder then reports it the way it always has).
    fn read<'v>(&self, mut args: &[u8], out: &'v mut [u64; MAX_FIELDS]) -> Option<&'v [u64]> {
        for (value, &width) in out.iter_mut().zip(&self.bytes[..self.len]) {
            let (field, rest) = args.split_at_checked(width)?;
            let mut le = [0u8; 8];
            le[..width].copy_from_slice(field);
            *value = u64::from_le_bytes(le);
            args = rest;
        }
        Some(&out[..self.len])
    }
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

impl Decoded {
    /// The kernel events among the items, in order.
    pub fn events(&self) -> Vec<Event> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Event(e) => Some(*e),
                _ => None,
            })
            .collect()
    }
}

impl<'t> FrameDecoder<'t> {
    /// A decoder for streams of the firmware whose table is `table`.
    pub fn new(table: &'t Table) -> Self {
        FrameDecoder {
            table,
            known: known_signatures(),
            by_index: Vec::new(),
            frame: Vec::new(),
        }
    }

    /// Decodes `bytes`, the complete output of one boot.
    pub fn decode_all(&mut self, bytes: &[u8]) -> Decoded {
        if self.table.encoding() == Encoding::Rzcobs {
            self.decode_framed(bytes)
        } else {
            self.decode_streamed(bytes)
        }
    }

    /// Decodes an rzCOBS stream frame by frame: each frame ends with a zero byte, is
    /// unpacked here, and a Jostle event's arguments are read straight from its bytes; any
    /// other frame, and any frame that does not fit its format, goes to defmt-decoder (as
    /// [`Self::decode_streamed`] would, with the same items and errors).
    fn decode_framed(&mut self, bytes: &[u8]) -> Decoded {
        let mut frame = std::mem::take(&mut self.frame);
        let mut items = Vec::new();
        let mut frames = 0;
        let mut error = None;
        for piece in bytes.split_inclusive(|b| *b == 0) {
            let Some((0, body)) = piece.split_last().map(|(z, b)| (*z, b)) else {
                // rzCOBS frames end with a zero byte: data after the last one is a frame
                // cut short.
                error = Some(JostleError::StreamTruncated(format!(
                    "the stream ends inside a frame after {frames} frames"
                )));
                break;
            };
            if body.is_empty() {
                continue; // a separator before the first frame, or between two
            }
            let item = if rzcobs_decode(body, &mut frame) {
                self.item_of_payload(&frame, &mut frames)
            } else {
                Err(malformed(frames))
            };
            match item {
                Ok(item) => items.push(item),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        self.frame = frame;
        Decoded {
            items,
            error,
            frames,
        }
    }

    /// The item of one unpacked frame (format index, then arguments), counted in `frames`
    /// once it is known to be a whole frame.
    fn item_of_payload(&mut self, payload: &[u8], frames: &mut usize) -> Result<Item, JostleError> {
        if let Some(event) = self.event_of_fields(payload) {
            *frames += 1;
            return Ok(Item::Event(event));
        }
        // defmt-decoder's stream reports a frame that ends too early as malformed, too.
        let Ok((frame, _)) = self.table.decode(payload) else {
            return Err(malformed(*frames));
        };
        *frames += 1;
        self.item_of_frame(&frame, *frames)
    }

    /// The event of a frame whose index is known to be a Jostle event's with fixed-width
    /// arguments, read from its bytes; `None` for every other frame.
    fn event_of_fields(&self, payload: &[u8]) -> Option<Event> {
        let (index, args) = payload.split_first_chunk::<2>()?;
        let index = usize::from(u16::from_le_bytes(*index));
        let Some(Some(Reading::Fields(kind, widths))) = self.by_index.get(index) else {
            return None;
        };
        kind.from_values(widths.read(args, &mut [0; MAX_FIELDS])?)
    }

    /// Decodes `bytes` with defmt-decoder's stream decoder (the path of an unframed, raw
    /// encoded stream).
    fn decode_streamed(&mut self, bytes: &[u8]) -> Decoded {
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
                    match self.item_of_frame(&frame, frames) {
                        Ok(item) => items.push(item),
                        Err(e) => break Some(e),
                    }
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
                Err(DecodeError::Malformed) => break Some(malformed(frames)),
            }
        };
        Decoded {
            items,
            error,
            frames,
        }
    }

    /// The item of a frame decoded by defmt-decoder (the `frames`-th of its stream), from
    /// its rendered text.
    fn item_of_frame(&mut self, frame: &Frame<'_>, frames: usize) -> Result<Item, JostleError> {
        let text = frame.display_message().to_string();
        Ok(match self.known_of(frame) {
            Known::Event(kind) => match kind.parse(&text) {
                Some(ev) => Item::Event(ev),
                None => {
                    return Err(JostleError::StreamCorrupt(format!(
                        "frame {frames} `{text}` does not fit its format `{}`",
                        kind.format()
                    )));
                }
            },
            Known::Site => match parse_site(&text) {
                Some((id, loc)) => Item::Site(id, loc),
                None => {
                    return Err(JostleError::StreamCorrupt(format!(
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
        })
    }

    /// What `frame`'s format is, worked out from its fragments the first time its index is
    /// met, when it is also decided whether later frames of that index skip defmt-decoder.
    fn known_of(&mut self, frame: &Frame<'_>) -> Known {
        let Ok(index) = u16::try_from(frame.index()).map(usize::from) else {
            return self.reading_of(frame).known();
        };
        if let Some(Some(reading)) = self.by_index.get(index) {
            return reading.known();
        }
        let reading = self.reading_of(frame);
        if self.by_index.len() <= index {
            self.by_index.resize(index + 1, None);
        }
        self.by_index[index] = Some(reading);
        reading.known()
    }

    /// How the frames of `frame`'s format index become items. Their arguments are read from
    /// the bytes only when the format is exactly the kernel's for that kind (the types the
    /// kernel's fields have) and no timestamp sits between the index and the arguments.
    fn reading_of(&self, frame: &Frame<'_>) -> Reading {
        let fragments = frame.fragments();
        let known = self
            .known
            .get(&signature_of_fragments(&fragments))
            .copied()
            .unwrap_or(Known::Other);
        let Known::Event(kind) = known else {
            return Reading::Rendered(known);
        };
        let kernels = defmt_parser::parse(kind.format(), defmt_parser::ParserMode::Strict);
        match Widths::of(&fragments) {
            Some(widths)
                if !self.table.has_timestamp() && kernels.is_ok_and(|k| k == fragments) =>
            {
                Reading::Fields(kind, widths)
            }
            _ => Reading::Rendered(known),
        }
    }
}

impl Reading {
    fn known(self) -> Known {
        match self {
            Reading::Fields(kind, _) => Known::Event(kind),
            Reading::Rendered(known) => known,
        }
    }
}

/// The error of a frame defmt-decoder cannot decode.
fn malformed(good_frames: usize) -> JostleError {
    JostleError::StreamCorrupt(format!("malformed frame after {good_frames} good frames"))
}

/// Finds the frames that start a run (`RunStart`), or that end one ([`RunStarts::ends`]),
/// in a growing rzCOBS stream as it arrives, for the limits of each run of a boot of
/// several: each complete frame is unpacked once to read its format index, and a whole
/// frame is decoded only the first time its index is seen.
pub struct RunStarts<'t> {
    table: &'t Table,
    /// Whether [`RunStarts::scan`] gives the offsets after the frames found.
    after: bool,
    signature: String,
    /// Format index → whether it is the frame looked for.
    known: HashMap<u16, bool>,
    /// Bytes before this offset are whole frames already looked at.
    checked: usize,
    frame: Vec<u8>,
}

impl<'t> RunStarts<'t> {
    /// A scanner of streams of the firmware whose table is `table`; `None` when the stream
    /// is not rzCOBS-framed (frames cannot be told apart without decoding them all).
    pub fn new(table: &'t Table) -> Option<RunStarts<'t>> {
        Self::of(table, EventKind::RunStart.format())
    }

    /// As [`RunStarts::new`], for the frames that end a run (`RunEnd`): [`RunStarts::scan`]
    /// gives the offset of each frame's end (the next run's first byte).
    pub fn ends(table: &'t Table) -> Option<RunStarts<'t>> {
        Self::of(table, EventKind::RunEnd.format()).map(|s| RunStarts { after: true, ..s })
    }

    /// As [`RunStarts::ends`], for the frames a served boot writes when it waits for the
    /// next run's block (`side::AWAITING_BLOCK`).
    pub fn awaiting_block(table: &'t Table) -> Option<RunStarts<'t>> {
        Self::of(table, side::AWAITING_BLOCK).map(|s| RunStarts { after: true, ..s })
    }

    fn of(table: &'t Table, format: &str) -> Option<RunStarts<'t>> {
        (table.encoding() == Encoding::Rzcobs).then(|| RunStarts {
            table,
            after: false,
            signature: signature_of_format(format),
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
                found.push(if self.after { at + piece.len() } else { at });
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

    /// Packs `payload` as one rzCOBS frame, its zero byte included, as defmt's encoder
    /// does: groups of 7 bytes with a byte of zero flags after them, or runs of 7 to 134
    /// non-zero bytes with a length byte after them.
    fn rzcobs_encode(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < payload.len() {
            let run = payload[at..]
                .iter()
                .take(134)
                .take_while(|b| **b != 0)
                .count();
            if run >= 7 {
                out.extend_from_slice(&payload[at..at + run]);
                at += run;
                if run == 134 {
                    out.push(0xFF);
                } else {
                    out.push(0x80 | (run - 7) as u8);
                    at += 1; // the zero that ends the run (if any) goes with it
                }
                continue;
            }
            // Flag bit k: byte k of the group is zero (bytes past the end read as zeros).
            let group = &payload[at..(at + 7).min(payload.len())];
            let mut zeros = 0x7F;
            for (k, b) in group.iter().enumerate() {
                if *b != 0 {
                    zeros &= !(1 << k);
                    out.push(*b);
                }
            }
            out.push(zeros);
            at += group.len();
        }
        out.push(0);
        out
    }

    /// A table as `defmt_decoder::Table::parse` would read from an ELF, with `formats`
    /// (tag, format string) at indices from 3 on.
    fn table_of(formats: &[(&str, &str)], encoding: &str) -> Table {
        let entries: serde_json::Map<String, serde_json::Value> = formats
            .iter()
            .enumerate()
            .map(|(i, (tag, format))| {
                let entry = serde_json::json!({
                    "string": { "tag": tag, "string": format },
                    "raw_symbol": format,
                });
                ((i + 3).to_string(), entry)
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "timestamp": null,
            "entries": entries,
            "bitflags": {},
            "encoding": encoding,
        }))
        .expect("a table")
    }

    /// The firmware's own logs, and a format with `Read`'s literal pieces but other types.
    const LOGS: &[(&str, &str)] = &[
        ("Println", "counter = {=u32}"),
        ("Println", "hex {=u8:x}"),
        ("Println", "name {=str}"),
        ("Println", "bytes {=[u8]}"),
        ("Println", "interned {=istr}"),
        ("Str", "hello"),
        ("Info", "info {=u8} {=u64}"),
        ("Println", "R t={=u16} s={=u32} a={=u32}"),
    ];

    /// Every event kind's format, the side frames', then [`LOGS`].
    fn jostle_formats() -> Vec<(&'static str, &'static str)> {
        let mut formats: Vec<_> = EventKind::ALL
            .iter()
            .map(|k| ("Println", k.format()))
            .collect();
        formats.push(("Println", side::SITE));
        formats.push(("Println", side::PANIC_MESSAGE));
        formats.extend_from_slice(LOGS);
        formats
    }

    /// The frame payload of format `format` of [`jostle_formats`] with `args` (already
    /// encoded), packed.
    fn frame(format: &str, args: &[u8]) -> Vec<u8> {
        let index = jostle_formats()
            .iter()
            .position(|(_, f)| *f == format)
            .expect("a format of the table")
            + 3;
        let mut payload = (index as u16).to_le_bytes().to_vec();
        payload.extend_from_slice(args);
        rzcobs_encode(&payload)
    }

    /// An event's frame, as the firmware's `Event::emit_defmt` writes it.
    fn event_frame(ev: &Event) -> Vec<u8> {
        let mut text = String::new();
        ev.render(&mut text).unwrap();
        let mut values = Vec::new();
        jostle_kernel::event::match_template(ev.kind().format(), &text, &mut |arg| {
            values.push(arg.parse::<u64>().unwrap());
            true
        })
        .unwrap();
        let fragments =
            defmt_parser::parse(ev.kind().format(), defmt_parser::ParserMode::Strict).unwrap();
        let widths = Widths::of(&fragments).expect("events have fixed-width fields");
        let mut args = Vec::new();
        for (v, w) in values.iter().zip(&widths.bytes[..widths.len]) {
            args.extend_from_slice(&v.to_le_bytes()[..*w]);
        }
        frame(ev.kind().format(), &args)
    }

    fn with_len(bytes: &[u8]) -> Vec<u8> {
        let mut out = (bytes.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(bytes);
        out
    }

    /// A stream of every kind of frame: each event sample twice (the first of an index goes
    /// through defmt-decoder, the next ones not), site definitions, a panic message, logs of
    /// every parameter type, and separators of several zeros.
    fn jostle_stream() -> Vec<u8> {
        let mut stream = vec![0];
        for ev in Event::samples().chain(Event::samples()) {
            stream.extend(event_frame(&ev));
        }
        let mut site = 0x1234_5678_u32.to_le_bytes().to_vec();
        site.extend(with_len(b"C:\\src\\a.rs"));
        site.extend(12_u32.to_le_bytes());
        site.extend(34_u32.to_le_bytes());
        stream.extend(frame(side::SITE, &site));
        stream.extend(frame(side::PANIC_MESSAGE, &with_len(b"1 + 1 != 3")));
        stream.push(0);
        stream.extend(frame("counter = {=u32}", &0xDEAD_BEEF_u32.to_le_bytes()));
        stream.extend(frame("hex {=u8:x}", &[0xAB]));
        stream.extend(frame("name {=str}", &with_len(b"a long name, longer than 134 bytes: 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789")));
        stream.extend(frame("bytes {=[u8]}", &with_len(&[0, 1, 2, 0, 0, 3])));
        let hello =
            (LOGS.iter().position(|(_, f)| *f == "hello").unwrap() + 3 + EventKind::ALL.len() + 2)
                as u16;
        stream.extend(frame("interned {=istr}", &hello.to_le_bytes()));
        stream.extend(frame("info {=u8} {=u64}", &[7, 1, 0, 0, 0, 0, 0, 0, 9]));
        stream.extend(frame(
            "R t={=u16} s={=u32} a={=u32}",
            &[200, 0, 1, 0, 0, 0, 2, 0, 0, 0],
        ));
        stream.extend([0, 0]);
        stream.extend(event_frame(&Event::samples().next().unwrap()));
        stream
    }

    /// Decodes `stream` both ways and fails unless the items, frame counts and errors are
    /// the same.
    fn same_both_ways(fast: &mut FrameDecoder<'_>, slow: &mut FrameDecoder<'_>, stream: &[u8]) {
        let a = fast.decode_all(stream);
        let b = slow.decode_streamed(stream);
        assert_eq!(a.items, b.items, "{stream:02x?}");
        assert_eq!(a.frames, b.frames, "{stream:02x?}");
        assert_eq!(
            format!("{:?}", a.error),
            format!("{:?}", b.error),
            "{stream:02x?}"
        );
    }

    #[test]
    fn rzcobs_frames_unpack_to_what_was_packed() {
        let mut unpacked = Vec::new();
        for payload in [
            &[][..],
            &[0],
            &[1],
            &[0, 1, 0, 0, 2, 3, 4, 5, 0, 6],
            &[1, 2, 3, 4, 5, 6, 7],
            &[1, 2, 3, 4, 5, 6, 7, 8, 0, 9],
            &[0x55; 300],
        ] {
            let packed = rzcobs_encode(payload);
            let (0, body) = packed.split_last().map(|(z, b)| (*z, b)).unwrap() else {
                panic!("no frame end")
            };
            assert!(!body.contains(&0));
            assert!(rzcobs_decode(body, &mut unpacked));
            // Unpacking pads a frame with zeros (defmt ignores what follows the arguments).
            assert_eq!(&unpacked[..payload.len()], payload);
            assert!(unpacked[payload.len()..].iter().all(|b| *b == 0));
        }
        assert!(!rzcobs_decode(&[0x01], &mut unpacked));
        assert!(!rzcobs_decode(&[0x85], &mut unpacked));
    }

    #[test]
    fn events_read_from_their_bytes_are_the_events_defmt_decoder_renders() {
        let table = table_of(&jostle_formats(), "Rzcobs");
        let stream = jostle_stream();
        let mut fast = FrameDecoder::new(&table);
        let decoded = fast.decode_all(&stream);
        assert!(decoded.error.is_none(), "{:?}", decoded.error);
        let events = decoded.events();
        let samples: Vec<Event> = Event::samples().collect();
        assert_eq!(events[..samples.len()], samples);
        assert_eq!(events[samples.len()..2 * samples.len()], samples);
        assert!(decoded.items.contains(&Item::Log("hex ab".into())));
        assert!(decoded.items.contains(&Item::Log("interned hello".into())));
        assert!(
            decoded
                .items
                .contains(&Item::PanicMessage("1 + 1 != 3".into()))
        );
        // The formats of events read from their bytes; a look-alike is rendered.
        let readings: Vec<_> = fast.by_index.iter().flatten().collect();
        let read_directly = readings
            .iter()
            .filter(|r| matches!(r, Reading::Fields(..)))
            .count();
        assert_eq!(read_directly, EventKind::ALL.len());
        assert!(
            readings
                .iter()
                .any(|r| matches!(r, Reading::Rendered(Known::Event(EventKind::Read))))
        );

        let mut slow = FrameDecoder::new(&table);
        same_both_ways(&mut fast, &mut slow, &stream);
    }

    #[test]
    fn cut_and_corrupt_streams_give_the_same_items_and_errors_both_ways() {
        let table = table_of(&jostle_formats(), "Rzcobs");
        let stream = jostle_stream();
        // One decoder each for every case: what an earlier stream taught them stays.
        let mut fast = FrameDecoder::new(&table);
        let mut slow = FrameDecoder::new(&table);
        for end in 0..=stream.len() {
            same_both_ways(&mut fast, &mut slow, &stream[..end]);
        }
        for at in 0..stream.len() {
            for change in [
                |b: u8| b ^ 0x01,
                |b: u8| b ^ 0x80,
                |_| 0,
                |_| 0xFF,
                |_| 0x7F,
            ] {
                let mut bad = stream.clone();
                bad[at] = change(bad[at]);
                same_both_ways(&mut fast, &mut slow, &bad);
            }
        }
        // A look-alike of an event whose value does not fit the event's field.
        let wide = frame(
            "R t={=u16} s={=u32} a={=u32}",
            &[0x2C, 0x01, 1, 0, 0, 0, 2, 0, 0, 0],
        );
        same_both_ways(&mut fast, &mut slow, &wide);
        assert!(fast.decode_all(&wide).error.is_some());
    }

    #[test]
    fn raw_encoded_streams_still_go_through_defmt_decoder() {
        let table = table_of(&jostle_formats(), "Raw");
        let read = Event::Read {
            t: 1,
            s: 0x2000_0000,
            a: 0x2000_0004,
        };
        let index = (EventKind::ALL
            .iter()
            .position(|k| *k == EventKind::Read)
            .unwrap()
            + 3) as u16;
        let mut frame = index.to_le_bytes().to_vec();
        frame.extend([1, 0, 0, 0, 0x20, 4, 0, 0, 0x20]);
        let stream = [frame.clone(), frame].concat();
        let decoded = FrameDecoder::new(&table).decode_all(&stream);
        assert_eq!(decoded.items, vec![Item::Event(read), Item::Event(read)]);
        assert_eq!(decoded.frames, 2);
    }

    #[test]
    fn signatures_are_distinct() {
        let sigs = known_signatures();
        assert_eq!(sigs.len(), EventKind::ALL.len() + 2);
    }
}
