//! The fast tokenizer for Kineto traces (issue 24 §1): one pass over the JSON bytes that
//! finds each event's `ph`, `cat`, `name`, `ts`, `dur` and `args` and skips everything else
//! without building a value. Two entries: [`scan`] walks a whole trace (measured in
//! `benches/tokenize.rs`), and [`scan_event`] reads one event's text as the import's fast path
//! hands it over (`trace/kineto/read/fast.rs`), validating it whole and saying "unsure"
//! (`None`) wherever it could read differently from the `serde` visitors.
//!
//! Strings are handed out as the bytes between their quotes ([`Text`]), decoded only when
//! asked and only when they hold an escape. `args` is handed out as its raw JSON text. `ts` and
//! `dur` are read straight from the number's bytes, digit by digit, into integer ns
//! ([`exact_scaled`]: µs × 10³, never through `f64`): exact, or rounded to the nearest ns with
//! halves away from zero and said so ([`Time::Rounded`]), or too large for `i64`
//! ([`Time::Overflow`]). That is the crate's one µs → ns rule: the careful reader's
//! `trace::kineto::number::scaled_decimal` calls [`exact_scaled`].
//!
//! What [`scan`] checks: the structure it walks (the top-level object or array, the events array,
//! each event object, its separators), that every string and container it skips is closed and
//! that brackets match, that the strings and numbers it returns are valid JSON and UTF-8, and
//! that an event names no field of the six twice. What it does not check inside a skipped
//! value: the grammar of numbers and literals, control characters and UTF-8 in strings. So on
//! text that is not JSON it may yield events where the careful reader refuses the file: a
//! fast path built on it must leave the verdict on a file to the careful reader (re-read on
//! any doubt), which also keeps the wording of every error.
//!
//! Time: O(bytes). Space: O(nesting depth); nothing per event is allocated.

use std::borrow::Cow;

/// A JSON string's text between its quotes, as in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text<'a> {
    raw: &'a [u8],
    escaped: bool,
}

impl<'a> Text<'a> {
    /// The bytes between the quotes, escapes undecoded.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// Whether the string holds a `\` escape (then [`Text::decoded`] allocates).
    pub fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// The string's value: borrowed when it has no escape, decoded otherwise.
    pub fn decoded(&self) -> Cow<'a, str> {
        if self.escaped {
            // Checked to decode when it was scanned.
            Cow::Owned(decode_escaped(self.raw).unwrap_or_default())
        } else {
            // Checked to be UTF-8 when it was scanned.
            Cow::Borrowed(std::str::from_utf8(self.raw).unwrap_or_default())
        }
    }
}

/// A time field read as integer ns (or, for `baseTimeNanoseconds`, as an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Time {
    /// The exact value.
    Exact(i64),
    /// Digits remained below the unit: the nearest value, halves away from zero.
    Rounded(i64),
    /// A number whose value does not fit in `i64` after scaling.
    Overflow,
    /// Not a number (a string, an object, `true`...); `null` counts as an absent field.
    NotANumber,
}

/// One event's fields of interest. A field is `None` when it is absent or `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScannedEvent<'a> {
    /// Its index in the events array.
    pub index: usize,
    /// `ph`.
    pub ph: Option<Text<'a>>,
    /// `cat`.
    pub cat: Option<Text<'a>>,
    /// `name`.
    pub name: Option<Text<'a>>,
    /// `ts`, µs in the trace, here ns.
    pub ts: Option<Time>,
    /// `dur`, µs in the trace, here ns.
    pub dur: Option<Time>,
    /// `args`: the value's raw JSON text.
    pub args: Option<&'a [u8]>,
}

/// What the scan found besides the events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    /// How many events.
    pub events: usize,
    /// `baseTimeNanoseconds` (an integer count of ns, so scale 0), when present and not null.
    pub base_time: Option<Time>,
    /// Whether the text was a top-level object with `traceEvents` (else a bare array).
    pub in_object: bool,
}

/// Why the scan stopped: the byte offset and what was expected there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {expected}")]
pub struct ScanError {
    /// Offset into the text.
    pub offset: usize,
    /// What the scanner expected there.
    pub expected: &'static str,
}

type Result<T> = std::result::Result<T, ScanError>;

/// Scans a Kineto trace (`{"traceEvents": [...], ...}` or a bare array of events), calling
/// `each` once per event in order.
///
/// # Errors
/// [`ScanError`] at the first structural problem (see the module docs for what is checked),
/// for an object with no `traceEvents`, an event that is not an object, a field of the six
/// given twice, or a `ph`, `cat` or `name` that is not a string.
pub fn scan<'a>(text: &'a [u8], mut each: impl FnMut(ScannedEvent<'a>)) -> Result<Scanned> {
    let mut s = Scanner {
        text,
        at: 0,
        stack: Vec::new(),
    };
    let mut found = Scanned::default();
    s.ws();
    match s.peek() {
        Some(b'[') => found.events = s.events(&mut each)?,
        Some(b'{') => {
            found.in_object = true;
            s.top_object(&mut found, &mut each)?;
        }
        _ => return Err(s.error("`{` or `[` at the start")),
    }
    s.ws();
    if s.at != text.len() {
        return Err(s.error("nothing after the top-level value"));
    }
    Ok(found)
}

/// A byte class: what the container skipper must look at.
const STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'[' as usize] = true;
    table[b'}' as usize] = true;
    table[b']' as usize] = true;
    table
};

/// The cursor over the text, and the stack of open containers of a skipped value.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    stack: Vec<u8>,
}

impl<'a> Scanner<'a> {
    fn error(&self, expected: &'static str) -> ScanError {
        ScanError {
            offset: self.at,
            expected,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    #[inline]
    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<()> {
        self.ws();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// After an element: `true` when another follows (a `,` was read), `false` at `close`.
    #[inline]
    fn next_or_close(&mut self, close: u8, expected: &'static str) -> Result<bool> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(self.error(expected)),
        }
    }

    /// A string starting at the cursor (`"`): its bytes between the quotes.
    #[inline]
    fn string(&mut self) -> Result<Text<'a>> {
        if self.peek() != Some(b'"') {
            return Err(self.error("a string"));
        }
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            match memchr::memchr2(b'"', b'\\', &self.text[at..]) {
                Some(i) if self.text[at + i] == b'"' => {
                    self.at = at + i + 1;
                    return Ok(Text {
                        raw: &self.text[start..at + i],
                        escaped,
                    });
                }
                Some(i) => {
                    escaped = true;
                    at += i + 2;
                    if at > self.text.len() {
                        break;
                    }
                }
                None => break,
            }
        }
        self.at = self.text.len();
        Err(self.error("the closing `\"` of a string"))
    }

    /// A string that is returned to the caller: also checked to be a valid JSON string.
    fn checked_string(&mut self) -> Result<Text<'a>> {
        let start = self.at;
        let text = self.string()?;
        let valid = if text.escaped {
            decode_escaped(text.raw).is_some()
        } else {
            text.raw.iter().all(|&b| b >= 0x20) && std::str::from_utf8(text.raw).is_ok()
        };
        if valid {
            Ok(text)
        } else {
            self.at = start;
            Err(self.error("a valid JSON string"))
        }
    }

    /// An object key and its `:`.
    #[inline]
    fn key(&mut self) -> Result<Text<'a>> {
        self.ws();
        let key = self.string()?;
        self.expect(b':', "`:` after an object key")?;
        Ok(key)
    }

    /// Skips one value of any kind.
    fn skip_value(&mut self) -> Result<()> {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string().map(drop),
            Some(b'{' | b'[') => self.skip_container(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.peek() {
                    self.at += 1;
                }
                Ok(())
            }
            _ => Err(self.error("a JSON value")),
        }
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<()> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error("`true`, `false` or `null`"))
        }
    }

    /// Skips an object or array from its opening bracket to its matching close.
    fn skip_container(&mut self) -> Result<()> {
        self.stack.clear();
        while let Some(i) = self.text[self.at..]
            .iter()
            .position(|&b| STRUCTURAL[usize::from(b)])
        {
            self.at += i;
            match self.text[self.at] {
                b'"' => {
                    self.string()?;
                    continue;
                }
                open @ (b'{' | b'[') => self.stack.push(if open == b'{' { b'}' } else { b']' }),
                close => {
                    if self.stack.pop() != Some(close) {
                        return Err(self.error("a bracket matching the one it closes"));
                    }
                    if self.stack.is_empty() {
                        self.at += 1;
                        return Ok(());
                    }
                }
            }
            self.at += 1;
        }
        self.at = self.text.len();
        Err(self.error("the end of an object or array"))
    }

    /// A time field's value: its number read exactly × 10^`scale`, or `None` for `null`.
    fn time(&mut self, scale: u32) -> Result<Option<Time>> {
        self.ws();
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => {
                let start = self.at;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.peek() {
                    self.at += 1;
                }
                match exact_scaled(&self.text[start..self.at], scale) {
                    Ok(time) => Ok(Some(time)),
                    Err(NotJsonNumber) => {
                        self.at = start;
                        Err(self.error("a JSON number"))
                    }
                }
            }
            Some(b'n') => self.literal(b"null").map(|()| None),
            _ => self.skip_value().map(|()| Some(Time::NotANumber)),
        }
    }

    /// A `ph`, `cat` or `name` value: a string, or `None` for `null`.
    fn text_field(&mut self) -> Result<Option<Text<'a>>> {
        self.ws();
        match self.peek() {
            Some(b'n') => self.literal(b"null").map(|()| None),
            Some(b'"') => self.checked_string().map(Some),
            _ => Err(self.error("a string (ph, cat and name are strings)")),
        }
    }

    /// The top-level object: `traceEvents` scanned, `baseTimeNanoseconds` read, the rest skipped.
    fn top_object(
        &mut self,
        found: &mut Scanned,
        each: &mut impl FnMut(ScannedEvent<'a>),
    ) -> Result<()> {
        self.at += 1;
        self.ws();
        let (mut saw_events, mut saw_base) = (false, false);
        if self.peek() == Some(b'}') {
            self.at += 1;
        } else {
            loop {
                let key = self.key()?;
                match key_name(&key).as_deref() {
                    Some("traceEvents") if !saw_events => {
                        saw_events = true;
                        self.ws();
                        found.events = self.events(each)?;
                    }
                    Some("baseTimeNanoseconds") if !saw_base => {
                        saw_base = true;
                        found.base_time = self.time(0)?;
                    }
                    Some("traceEvents" | "baseTimeNanoseconds") => {
                        return Err(self.error("each top-level key once"))
                    }
                    _ => self.skip_value()?,
                }
                if !self.next_or_close(b'}', "`,` or `}` in the top-level object")? {
                    break;
                }
            }
        }
        if saw_events {
            Ok(())
        } else {
            Err(self.error("a `traceEvents` array"))
        }
    }

    /// The events array from its `[`: each element scanned as an event. Returns the count.
    fn events(&mut self, each: &mut impl FnMut(ScannedEvent<'a>)) -> Result<usize> {
        self.expect(b'[', "`[`: the events are an array")?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(0);
        }
        let mut index = 0;
        loop {
            let event = self.event(index)?;
            each(event);
            index += 1;
            if !self.next_or_close(b']', "`,` or `]` in the events array")? {
                return Ok(index);
            }
        }
    }

    /// One event object.
    fn event(&mut self, index: usize) -> Result<ScannedEvent<'a>> {
        self.expect(b'{', "`{`: every event is an object")?;
        let mut event = ScannedEvent {
            index,
            ph: None,
            cat: None,
            name: None,
            ts: None,
            dur: None,
            args: None,
        };
        let mut seen = 0_u8;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(event);
        }
        loop {
            let key = self.key()?;
            let field = match key.raw {
                _ if key.escaped => field_of(key_name(&key).as_deref().unwrap_or_default()),
                raw => field_of_bytes(raw),
            };
            if let Some(bit) = field {
                if seen & (1 << bit) != 0 {
                    return Err(self.error("each of ph, cat, name, ts, dur, args once per event"));
                }
                seen |= 1 << bit;
            }
            match field {
                Some(PH) => event.ph = self.text_field()?,
                Some(CAT) => event.cat = self.text_field()?,
                Some(NAME) => event.name = self.text_field()?,
                Some(TS) => event.ts = self.time(3)?,
                Some(DUR) => event.dur = self.time(3)?,
                Some(_) => {
                    self.ws();
                    let start = self.at;
                    if self.peek() == Some(b'n') && self.literal(b"null").is_ok() {
                        event.args = None;
                    } else {
                        self.skip_value()?;
                        event.args = Some(&self.text[start..self.at]);
                    }
                }
                None => self.skip_value()?,
            }
            if !self.next_or_close(b'}', "`,` or `}` in an event")? {
                return Ok(event);
            }
        }
    }
}

const PH: u8 = 0;
const CAT: u8 = 1;
const NAME: u8 = 2;
const TS: u8 = 3;
const DUR: u8 = 4;
const ARGS: u8 = 5;

#[inline]
fn field_of_bytes(key: &[u8]) -> Option<u8> {
    match key {
        b"ph" => Some(PH),
        b"cat" => Some(CAT),
        b"name" => Some(NAME),
        b"ts" => Some(TS),
        b"dur" => Some(DUR),
        b"args" => Some(ARGS),
        _ => None,
    }
}

fn field_of(key: &str) -> Option<u8> {
    field_of_bytes(key.as_bytes())
}

/// A key's value (decoded when it holds an escape); `None` when it does not decode.
fn key_name<'a>(key: &Text<'a>) -> Option<Cow<'a, str>> {
    if key.escaped {
        decode_escaped(key.raw).map(Cow::Owned)
    } else {
        std::str::from_utf8(key.raw).ok().map(Cow::Borrowed)
    }
}

/// The value of a JSON string body holding escapes, or `None` when it is not valid JSON.
fn decode_escaped(raw: &[u8]) -> Option<String> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

/// The bytes are not a JSON number.
#[derive(Debug, PartialEq, Eq)]
pub struct NotJsonNumber;

/// The JSON number `text` × 10^`scale`, read digit by digit (3: µs → ns), never through `f64`.
///
/// The rules are the careful reader's: digits below the unit are dropped and the value rounded
/// to the nearest, halves away from zero, by the first dropped digit ([`Time::Rounded`]); an
/// exponent longer than 6 characters (its `-` counted) or a result past `i64` is
/// [`Time::Overflow`]. No allocation: the digits are read in place.
///
/// # Errors
/// [`NotJsonNumber`] when `text` is not a number by the JSON grammar.
pub fn exact_scaled(text: &[u8], scale: u32) -> std::result::Result<Time, NotJsonNumber> {
    let parts = NumberParts::of(text).ok_or(NotJsonNumber)?;
    Ok(parts.scaled(scale))
}

/// A JSON number split into its parts.
struct NumberParts<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    /// The exponent's text after `e`/`E`, a `+` removed.
    exponent: &'a [u8],
}

impl<'a> NumberParts<'a> {
    /// Splits `text` by the JSON number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn of(text: &'a [u8]) -> Option<Self> {
        let (negative, rest) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
        let int_len = digits(rest);
        if int_len == 0 || (int_len > 1 && rest[0] == b'0') {
            return None;
        }
        let (int, mut rest) = rest.split_at(int_len);
        let mut frac: &[u8] = &[];
        if let Some((b'.', after)) = rest.split_first() {
            let len = digits(after);
            if len == 0 {
                return None;
            }
            (frac, rest) = after.split_at(len);
        }
        let mut exponent: &[u8] = &[];
        if let Some((b'e' | b'E', after)) = rest.split_first() {
            // One sign at most: `+` dropped from the text kept, `-` kept.
            let (text, body) = match after.split_first() {
                Some((b'+', body)) => (body, body),
                Some((b'-', body)) => (after, body),
                _ => (after, after),
            };
            let len = digits(body);
            if len == 0 || len != body.len() {
                return None;
            }
            exponent = text;
            rest = &[];
        }
        rest.is_empty().then_some(NumberParts {
            negative,
            int,
            frac,
            exponent,
        })
    }

    /// The value × 10^`scale`, by the careful reader's rules (see [`exact_scaled`]).
    fn scaled(&self, scale: u32) -> Time {
        if self.exponent.len() > 6 {
            return Time::Overflow;
        }
        let exponent = exponent_value(self.exponent);
        let shift = exponent + i64::from(scale) - self.frac.len() as i64;
        let all = self.int.iter().chain(self.frac);
        let leading_zeros = all.clone().take_while(|&&b| b == b'0').count();
        let digit_count = self.int.len() + self.frac.len() - leading_zeros;
        let keep = if shift >= 0 {
            digit_count
        } else {
            digit_count.saturating_sub(shift.unsigned_abs() as usize)
        };
        let limit = i128::from(i64::MAX) + 1;
        let mut value: i128 = 0;
        let mut digits = all.skip(leading_zeros).map(|&b| i128::from(b - b'0'));
        for d in digits.by_ref().take(keep) {
            value = value * 10 + d;
            if value > limit {
                return Time::Overflow;
            }
        }
        let mut exact = true;
        if shift > 0 {
            for _ in 0..shift {
                value *= 10;
                if value > limit {
                    return Time::Overflow;
                }
            }
        } else {
            let positions = shift.unsigned_abs() as usize;
            let mut dropped = digits.peekable();
            let first = dropped.peek().copied();
            if dropped.any(|d| d != 0) {
                exact = false;
                // When fewer digits are kept than dropped positions, the first dropped
                // position lies before the first digit (a value below a tenth of the unit).
                let first_dropped = if positions > digit_count {
                    0
                } else {
                    first.unwrap_or(0)
                };
                if first_dropped >= 5 {
                    value += 1;
                }
            }
        }
        let value = if self.negative { -value } else { value };
        match (i64::try_from(value), exact) {
            (Ok(v), true) => Time::Exact(v),
            (Ok(v), false) => Time::Rounded(v),
            (Err(_), _) => Time::Overflow,
        }
    }
}

/// An exponent's text (at most 6 characters, `-` optional) as a number.
fn exponent_value(text: &[u8]) -> i64 {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let magnitude = digits
        .iter()
        .fold(0_i64, |v, &b| v * 10 + i64::from(b - b'0'));
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// A time field of one event (`ts`, `dur`): the value's JSON text, read when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeText<'a> {
    raw: &'a [u8],
}

impl<'a> TimeText<'a> {
    /// The value's JSON text, as in the input (a number, or a value of another kind).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The value × 10^`scale` (3: µs → ns) by [`exact_scaled`]'s rules, or
    /// [`Time::NotANumber`] for a value that is not a number.
    pub fn scaled(&self, scale: u32) -> Time {
        match self.raw.first() {
            // Checked to be a JSON number when it was scanned.
            Some(b'-' | b'0'..=b'9') => exact_scaled(self.raw, scale).unwrap_or(Time::NotANumber),
            _ => Time::NotANumber,
        }
    }
}

/// One event's fields as the importer reads them, scanned from the event's own text by
/// [`scan_event`]. A field is `None` when it is absent or `null`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventHead<'a> {
    /// `ph`.
    pub ph: Option<&'a str>,
    /// `cat`.
    pub cat: Option<&'a str>,
    /// `name`.
    pub name: Option<&'a str>,
    /// `pid` when it is an integer.
    pub pid: Option<i64>,
    /// The stream `tid` names: an integer, or the 2021 string `"stream 7"`.
    pub tid: Option<i64>,
    /// The host thread `tid` names: an integer only.
    pub thread: Option<i64>,
    /// `ts`, as text.
    pub ts: Option<TimeText<'a>>,
    /// `dur`, as text.
    pub dur: Option<TimeText<'a>>,
    /// `args`: the value's raw JSON text.
    pub args: Option<&'a [u8]>,
}

/// The nesting [`scan_event`] follows inside an event (the splitter's limit: deeper text
/// never reaches it).
const EVENT_DEPTH: usize = 100;

/// Reads one event (the whole of `text`, an object) into its [`EventHead`], the way the
/// importer's `serde` visitors read it — or `None` when it is not sure to.
///
/// `Some` only when `text` is one JSON value, validated whole (every string, number,
/// literal and bracket, skipped or not, as `serde_json` checks them), and every field is
/// read exactly as the visitors read it. `None` (unsure, the caller reads the event with the
/// visitors) for anything else: not JSON, a `\` escape anywhere, a key of the eight the
/// visitors read given twice, a `ph`/`cat`/`name` that is not a string, a `pid`/`tid`
/// number that is not a plain integer of at most 18 digits (or `-0`, which `serde_json`
/// reads as a float), nesting past 100 levels. So a `Some` never differs from the visitors'
/// reading, and no error is worded here.
///
/// Time: O(bytes of `text`); nothing is allocated.
pub fn scan_event(text: &[u8]) -> Option<EventHead<'_>> {
    let mut s = Strict { text, at: 0 };
    s.ws();
    let head = s.event()?;
    s.ws();
    (s.at == text.len()).then_some(head)
}

/// The keys of an event the visitors read, by their bit for refusing a repeated one.
#[derive(Clone, Copy)]
enum Key {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
}

impl Key {
    #[inline]
    fn of(raw: &[u8]) -> Option<Key> {
        Some(match raw {
            b"ph" => Key::Ph,
            b"cat" => Key::Cat,
            b"name" => Key::Name,
            b"pid" => Key::Pid,
            b"tid" => Key::Tid,
            b"ts" => Key::Ts,
            b"dur" => Key::Dur,
            b"args" => Key::Args,
            _ => return None,
        })
    }
}

/// What `pid` / `tid` hold, as the visitors' `Id` reads it.
enum IdValue {
    Int(i64),
    Stream(i64),
    Other,
}

/// A validating cursor over one event's text: every method returns `None` when unsure.
struct Strict<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Strict<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// `byte` after whitespace.
    #[inline]
    fn byte(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// A string without escapes at the cursor: its text between the quotes, checked to be
    /// UTF-8 without control characters.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.at + 1;
        let len = memchr::memchr2(b'"', b'\\', self.text.get(start..)?)?;
        let raw = &self.text[start..start + len];
        if self.text[start + len] == b'\\' {
            return None;
        }
        self.at = start + len + 1;
        if raw.iter().all(|&b| (0x20..0x80).contains(&b)) {
            // ASCII: UTF-8 whatever it holds.
            return std::str::from_utf8(raw).ok();
        }
        if raw.iter().any(|&b| b < 0x20) {
            return None;
        }
        std::str::from_utf8(raw).ok()
    }

    /// A number at the cursor, checked by the JSON grammar: its text.
    #[inline]
    fn number(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.peek() {
            self.at += 1;
        }
        let text = &self.text[start..self.at];
        NumberParts::of(text).map(|_| text)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.text[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    /// One value of any kind, checked whole; `depth` containers are open around it.
    fn value(&mut self, depth: usize) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            _ => None,
        }
    }

    /// A value's text, checked whole.
    fn raw_value(&mut self, depth: usize) -> Option<&'a [u8]> {
        self.ws();
        let start = self.at;
        self.value(depth)?;
        Some(&self.text[start..self.at])
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > EVENT_DEPTH {
            return None;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            self.string()?;
            self.byte(b':')?;
            self.value(depth)?;
            if !self.next_or_close(b'}')? {
                return Some(());
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > EVENT_DEPTH {
            return None;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.value(depth)?;
            if !self.next_or_close(b']')? {
                return Some(());
            }
        }
    }

    /// After an element: `Some(true)` after a `,`, `Some(false)` after `close`.
    #[inline]
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            _ if b == close => Some(false),
            _ => None,
        }
    }

    /// A `ph`, `cat` or `name`: a string, or `None` for `null`.
    fn text_field(&mut self) -> Option<Option<&'a str>> {
        self.ws();
        match self.peek()? {
            b'n' => self.literal(b"null").map(|()| None),
            b'"' => self.string().map(Some),
            _ => None,
        }
    }

    /// A `pid` or `tid` (`None` for `null`), as the visitors' `Id` reads it.
    fn id_field(&mut self) -> Option<Option<IdValue>> {
        self.ws();
        match self.peek()? {
            b'n' => self.literal(b"null").map(|()| None),
            b'"' => {
                let v = self.string()?;
                let stream = v
                    .trim()
                    .strip_prefix("stream")
                    .and_then(|s| s.trim().parse().ok());
                Some(Some(stream.map_or(IdValue::Other, IdValue::Stream)))
            }
            b'-' | b'0'..=b'9' => {
                let text = self.number()?;
                let digits = text.strip_prefix(b"-").unwrap_or(text);
                // A plain integer that fits; `-0` is a float to `serde_json`.
                if digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) || text == b"-0" {
                    return None;
                }
                std::str::from_utf8(text)
                    .ok()?
                    .parse()
                    .ok()
                    .map(|v| Some(IdValue::Int(v)))
            }
            _ => self.value(1).map(|()| Some(IdValue::Other)),
        }
    }

    /// `ts`, `dur` or `args`: the value's text, or `None` for `null`.
    fn raw_field(&mut self) -> Option<Option<&'a [u8]>> {
        self.ws();
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        self.raw_value(1).map(Some)
    }

    /// The event object.
    fn event(&mut self) -> Option<EventHead<'a>> {
        if self.peek()? != b'{' {
            return None;
        }
        self.at += 1;
        let mut head = EventHead::default();
        let mut seen = 0_u8;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(head);
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.byte(b':')?;
            match Key::of(key.as_bytes()) {
                Some(key) => {
                    let bit = 1 << key as u8;
                    if seen & bit != 0 {
                        return None;
                    }
                    seen |= bit;
                    match key {
                        Key::Ph => head.ph = self.text_field()?,
                        Key::Cat => head.cat = self.text_field()?,
                        Key::Name => head.name = self.text_field()?,
                        Key::Pid => {
                            head.pid = match self.id_field()? {
                                Some(IdValue::Int(v)) => Some(v),
                                _ => None,
                            }
                        }
                        Key::Tid => {
                            (head.tid, head.thread) = match self.id_field()? {
                                Some(IdValue::Int(v)) => (Some(v), Some(v)),
                                Some(IdValue::Stream(v)) => (Some(v), None),
                                _ => (None, None),
                            }
                        }
                        Key::Ts => head.ts = self.raw_field()?.map(|raw| TimeText { raw }),
                        Key::Dur => head.dur = self.raw_field()?.map(|raw| TimeText { raw }),
                        Key::Args => head.args = self.raw_field()?,
                    }
                }
                None => self.value(1)?,
            }
            if !self.next_or_close(b'}')? {
                return Some(head);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<(Scanned, Vec<ScannedEvent<'_>>)> {
        let mut out = Vec::new();
        let found = scan(text.as_bytes(), |e| out.push(e))?;
        Ok((found, out))
    }

    #[test]
    fn microseconds_become_exact_nanoseconds() {
        let ns = |t: &str| exact_scaled(t.as_bytes(), 3);
        assert_eq!(
            ns("1682725898236567"),
            Ok(Time::Exact(1_682_725_898_236_567_000))
        );
        assert_eq!(ns("68.0"), Ok(Time::Exact(68_000)));
        assert_eq!(ns("12.345"), Ok(Time::Exact(12_345)));
        assert_eq!(ns("-0.001"), Ok(Time::Exact(-1)));
        assert_eq!(ns("1.5e2"), Ok(Time::Exact(150_000)));
        assert_eq!(ns("0.0005"), Ok(Time::Rounded(1)));
        assert_eq!(ns("0.00049"), Ok(Time::Rounded(0)));
        assert_eq!(ns("-2.0015"), Ok(Time::Rounded(-2002)));
        assert_eq!(ns("9223372036854775.807"), Ok(Time::Exact(i64::MAX)));
        assert_eq!(ns("9223372036854775.808"), Ok(Time::Overflow));
        assert_eq!(ns("-9223372036854775.808"), Ok(Time::Exact(i64::MIN)));
        assert_eq!(ns("1e1234567"), Ok(Time::Overflow));
        for bad in [
            "01", "1.", ".5", "1e", "1e+", "--1", "1.2.3", "+1", "", "1e+-5", "1e-+5", "1e--5",
        ] {
            assert_eq!(ns(bad), Err(NotJsonNumber), "{bad}");
        }
    }

    #[test]
    fn an_event_gives_its_six_fields_and_skips_the_rest() {
        let text = r#"{"schemaVersion": 1, "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k\"1", "pid": 0, "tid": 7,
             "ts": 100.5, "dur": 2, "args": {"stream": 7, "nested": [1, {"a": "}"}]}},
            {"name": null, "ts": "later", "extra": [[]]},
            {}
        ], "baseTimeNanoseconds": 1700000000000000000}"#;
        let (found, list) = events(text).unwrap();
        assert_eq!(found.events, 3);
        assert_eq!(
            found.base_time,
            Some(Time::Exact(1_700_000_000_000_000_000))
        );
        let first = &list[0];
        assert_eq!(first.ph.unwrap().decoded(), "X");
        assert_eq!(first.cat.unwrap().decoded(), "kernel");
        assert_eq!(first.name.unwrap().decoded(), "k\"1");
        assert_eq!(first.ts, Some(Time::Exact(100_500)));
        assert_eq!(first.dur, Some(Time::Exact(2_000)));
        assert_eq!(
            first.args,
            Some(&br#"{"stream": 7, "nested": [1, {"a": "}"}]}"#[..])
        );
        assert_eq!((list[1].name, list[1].ts), (None, Some(Time::NotANumber)));
        assert_eq!(list[2].index, 2);
    }

    #[test]
    fn broken_structure_is_refused_with_its_offset() {
        for (text, expected) in [
            (
                r#"{"traceEvents": [{"ts": 1}"#,
                "`,` or `]` in the events array",
            ),
            (
                r#"{"traceEvents": [{"args": {"a": [}}]}"#,
                "a bracket matching the one it closes",
            ),
            (
                r#"{"traceEvents": [{"ts": 1, "ts": 2}]}"#,
                "each of ph, cat, name, ts, dur, args once per event",
            ),
            (r#"{"other": 1}"#, "a `traceEvents` array"),
            (r#"{"traceEvents": [3]}"#, "`{`: every event is an object"),
            (
                r#"{"traceEvents": [{"ph": 3}]}"#,
                "a string (ph, cat and name are strings)",
            ),
            (r#"[{"name": "unclosed}]"#, "the closing `\"` of a string"),
            (r#"[] x"#, "nothing after the top-level value"),
        ] {
            assert_eq!(events(text).unwrap_err().expected, expected, "{text}");
        }
    }

    #[test]
    fn an_event_head_is_read_field_by_field() {
        let text = br#" {"ph": "X", "cat": "kernel", "name": "k<1>", "pid": 0, "tid": "stream 7 ",
            "ts": 100.5, "dur": 2e0, "id": [1, {"a": [true, false, null, -1.5E+3]}],
            "args": {"stream": 7, "s": "}"}} "#;
        let head = scan_event(text).expect("sure");
        assert_eq!(
            (head.ph, head.cat, head.name),
            (Some("X"), Some("kernel"), Some("k<1>"))
        );
        assert_eq!((head.pid, head.tid, head.thread), (Some(0), Some(7), None));
        assert_eq!(head.ts.map(|t| t.scaled(3)), Some(Time::Exact(100_500)));
        assert_eq!(head.dur.map(|t| t.raw()), Some(&b"2e0"[..]));
        assert_eq!(head.args, Some(&br#"{"stream": 7, "s": "}"}"#[..]));
        let head = scan_event(br#"{"tid": -3, "pid": "p", "ts": "x", "dur": null, "name": null}"#)
            .expect("sure");
        assert_eq!(
            (head.pid, head.tid, head.thread),
            (None, Some(-3), Some(-3))
        );
        assert_eq!(head.ts.map(|t| t.scaled(3)), Some(Time::NotANumber));
        assert_eq!((head.dur, head.name), (None, None));
        assert_eq!(scan_event(b"{}"), Some(EventHead::default()));
    }

    /// Whatever the visitors might read differently, or refuse, is unsure.
    #[test]
    fn an_event_it_is_not_sure_of_is_none() {
        for text in [
            r#"{"name": "a\"b"}"#,
            r#"{"n\u0061me": "a"}"#,
            r#"{"other": "\\"}"#,
            r#"{"ph": "X", "ph": "X"}"#,
            r#"{"ph": 3}"#,
            r#"{"pid": -0}"#,
            r#"{"pid": 1.0}"#,
            r#"{"tid": 12345678901234567890}"#,
            r#"{"ts": 01}"#,
            r#"{"ts": 1.}"#,
            r#"{"ts": 1e+-5}"#,
            r#"{"a": [1,]}"#,
            r#"{"a": {"b": 1,}}"#,
            r#"{"a": tru}"#,
            r#"{"a": truex}"#,
            r#"{"a": [}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": 1,}"#,
            r#"{"a": 1} x"#,
            r#"[1]"#,
            "",
        ] {
            assert_eq!(scan_event(text.as_bytes()), None, "{text}");
        }
        assert_eq!(scan_event(b"{\"a\": \"\xff\"}"), None);
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(scan_event(deep.as_bytes()), None);
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(99), "]".repeat(99));
        assert!(scan_event(deep.as_bytes()).is_some());
    }
}
