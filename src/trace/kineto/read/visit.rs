//! The serde visitors of the streaming pass: the top-level object, the `traceEvents`
//! sequence, one event's fields, and the small values in them (`pid` / `tid`, strings into
//! reused buffers, `baseTimeNanoseconds`).
//!
//! They only move what the parser hands them into [`State`] and its reused buffers;
//! deciding what an event is and keeping it is `take_event`'s job in the parent module. A
//! field seen twice is refused as serde's `derive` would (`duplicate-field`).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::super::number::exact_number_at;
use super::{State, Text};
use crate::{error::InputError as ImportError, trace::ReadOptions as ImportOptions};

type Result<T> = std::result::Result<T, ImportError>;

/// A bit per event field, to refuse a repeated one.
fn first_time<E: de::Error>(
    seen: &mut u8,
    bit: u8,
    name: &'static str,
) -> std::result::Result<(), E> {
    if *seen & bit != 0 {
        return Err(E::duplicate_field(name));
    }
    *seen |= bit;
    Ok(())
}

/// The keys of a trace event the importer reads.
enum Field {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Field, E> {
                Ok(match v {
                    "ph" => Field::Ph,
                    "cat" => Field::Cat,
                    "name" => Field::Name,
                    "pid" => Field::Pid,
                    "tid" => Field::Tid,
                    "ts" => Field::Ts,
                    "dur" => Field::Dur,
                    "args" => Field::Args,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// `null` or a string, into a reused buffer.
struct OptText<'b>(&'b mut Text);

impl<'de> DeserializeSeed<'de> for OptText<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptText<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("option")
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
        self.0.set = false;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_str(StrInto(self.0))
    }
}

/// A string, into a reused buffer.
struct StrInto<'b>(&'b mut Text);

impl Visitor<'_> for StrInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<(), E> {
        self.0.buf.clear();
        self.0.buf.push_str(v);
        self.0.set = true;
        Ok(())
    }
}

/// A `pid` or `tid`: any JSON value; an integer, or (for `tid`) `"stream N"`, is kept.
enum Id {
    Int(i64),
    Stream(i64),
    Other,
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Id, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Id, E> {
                Ok(i64::try_from(v).map_or(Id::Other, Id::Int))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Id, E> {
                let stream = v
                    .trim()
                    .strip_prefix("stream")
                    .and_then(|s| s.trim().parse().ok());
                Ok(stream.map_or(Id::Other, Id::Stream))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Id, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Id::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Id, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Id::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// `baseTimeNanoseconds`: an integer number of ns (read exactly), or absent / `null`.
fn base_of(raw: Option<&RawValue>, options: &ImportOptions) -> Result<Option<i64>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let path = || "baseTimeNanoseconds".to_owned();
    let value = exact_number_at(raw, 0, &path, options, &mut 0)?;
    value.map(Some).ok_or_else(|| {
        ImportError::new(
            "baseTimeNanoseconds",
            "wrong-type",
            "expected an integer number of nanoseconds",
        )
    })
}

/// The stream a `tid` names, read as the streaming pass reads it: an integer, or the 2021
/// string `"stream 7"`.
pub(crate) fn stream_of_tid(raw: &RawValue) -> Option<i64> {
    match serde_json::from_str::<Id>(raw.get()).ok()? {
        Id::Int(v) | Id::Stream(v) => Some(v),
        Id::Other => None,
    }
}

/// One trace event.
pub(crate) struct Event<'s, 'o>(pub(crate) &'s mut State<'o>);

impl<'de> DeserializeSeed<'de> for Event<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Event<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        st.in_event = true;
        st.fields.reset();
        while let Some(key) = map.next_key::<Field>()? {
            let f = &mut st.fields;
            match key {
                Field::Ph => {
                    first_time::<A::Error>(&mut f.seen, 1, "ph")?;
                    st.field = Some("ph");
                    map.next_value_seed(OptText(&mut f.ph))?;
                }
                Field::Cat => {
                    first_time::<A::Error>(&mut f.seen, 2, "cat")?;
                    st.field = Some("cat");
                    map.next_value_seed(OptText(&mut f.cat))?;
                }
                Field::Name => {
                    first_time::<A::Error>(&mut f.seen, 4, "name")?;
                    st.field = Some("name");
                    map.next_value_seed(OptText(&mut f.name))?;
                }
                Field::Pid => {
                    first_time::<A::Error>(&mut f.seen, 8, "pid")?;
                    st.field = Some("pid");
                    f.pid = match map.next_value::<Option<Id>>()? {
                        Some(Id::Int(v)) => Some(v),
                        _ => None,
                    };
                }
                Field::Tid => {
                    first_time::<A::Error>(&mut f.seen, 16, "tid")?;
                    st.field = Some("tid");
                    (f.tid, f.thread) = match map.next_value::<Option<Id>>()? {
                        Some(Id::Int(v)) => (Some(v), Some(v)),
                        Some(Id::Stream(v)) => (Some(v), None),
                        _ => (None, None),
                    };
                }
                Field::Ts | Field::Dur | Field::Args => {
                    let (bit, name) = match key {
                        Field::Ts => (32, "ts"),
                        Field::Dur => (64, "dur"),
                        _ => (128, "args"),
                    };
                    first_time::<A::Error>(&mut f.seen, bit, name)?;
                    st.field = Some(name);
                    let unread = match key {
                        Field::Args => f.args_unread(),
                        _ => f.times_unread(),
                    };
                    if unread {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        let raw = map.next_value::<Option<Box<RawValue>>>()?;
                        match key {
                            Field::Ts => f.ts = raw,
                            Field::Dur => f.dur = raw,
                            _ => f.args = raw,
                        }
                    }
                }
                Field::Other => {
                    st.field = None;
                    map.next_value::<IgnoredAny>()?;
                }
            }
            st.field = None;
        }
        let index = st.index.unwrap_or(0);
        if let Err(err) = st.take_event(index) {
            return Err(st.fail(err));
        }
        st.in_event = false;
        Ok(())
    }
}

/// The `traceEvents` array (or a bare array of events).
pub(crate) struct Events<'s, 'o>(pub(crate) &'s mut State<'o>);

impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        st.events_begin();
        let mut i = 0;
        loop {
            st.index = Some(i);
            if seq.next_element_seed(Event(st))?.is_none() {
                break;
            }
            i += 1;
        }
        st.events_end(i);
        Ok(())
    }
}

/// The top-level object.
pub(crate) struct Top<'s, 'o>(pub(crate) &'s mut State<'o>);

/// The top-level keys the importer reads, in the order of their bits for `first_time`.
const TOP_KEYS: [&str; 6] = [
    "traceEvents",
    "baseTimeNanoseconds",
    "distributedInfo",
    "deviceProperties",
    "traceName",
    "schemaVersion",
];

/// A top-level key just read: which of [`TOP_KEYS`] it is (`None`: one the importer skips),
/// refused when it comes twice; `seen` holds the bits of the keys seen so far.
pub(crate) fn top_key<E: de::Error>(
    st: &mut State<'_>,
    key: String,
    seen: &mut u8,
) -> std::result::Result<Option<usize>, E> {
    let known = TOP_KEYS.iter().position(|k| *k == key);
    st.top_key = Some(key);
    if let Some(k) = known {
        first_time::<E>(seen, 1 << k, TOP_KEYS[k])?;
    }
    Ok(known)
}

/// The value of the top-level key `known` ([`top_key`]).
pub(crate) struct TopValue<'s, 'o> {
    pub(crate) st: &'s mut State<'o>,
    pub(crate) known: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for TopValue<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        let st = self.st;
        match self.known {
            Some(0) => Events(st).deserialize(d)?,
            Some(1) => {
                let raw = Option::<Box<RawValue>>::deserialize(d)?;
                match base_of(raw.as_deref(), st.options) {
                    Ok(base) => st.base = Some(base),
                    Err(err) => return Err(st.fail(err)),
                }
            }
            Some(2) => st.top.distributed_info = Deserialize::deserialize(d)?,
            Some(3) => st.top.device_properties = Deserialize::deserialize(d)?,
            Some(4) => st.top.trace_name = Deserialize::deserialize(d)?,
            Some(5) => st.top.schema_version = Deserialize::deserialize(d)?,
            _ => {
                IgnoredAny::deserialize(d)?;
            }
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct TopLevel")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        let mut seen = 0u8;
        while let Some(key) = map.next_key::<String>()? {
            let known = top_key::<A::Error>(st, key, &mut seen)?;
            map.next_value_seed(TopValue { st, known })?;
            st.top_key = None;
        }
        Ok(())
    }
}
