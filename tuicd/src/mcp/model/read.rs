//! Reads one JSON-RPC message straight into the members [`super::classify`] looks at, without a
//! `Value` tree for the envelope.
//!
//! Every value goes through the same parser entry point a `serde_json::Value` would
//! (`deserialize_any`, recursively), so malformed bodies fail with the same syntax error at the
//! same place, numbers are range-checked the same way, and the nesting limit is the same. Members
//! nobody reads are walked and dropped; `jsonrpc`, `method` and `name` are compared or borrowed in
//! place. Duplicate members: the last one wins, as when a `Value` map is built.
//!
//! `tools/call` params are read into their fields ([`CallParams`]) when `method` comes before
//! `params` in the body (every client we know of writes it so, and key-sorted writers put `method`
//! first too). Otherwise params are read as a `Value` map, as every other method's are.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{CallParams, Member, Params, TOOLS_CALL, TaskParam};

/// Implements every scalar `visit_*` that `serde_json`'s `deserialize_any` calls, answering `$other`.
macro_rules! scalars_as {
    ($other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

/// What a body's top level was.
pub(super) enum Shape<'a> {
    Object(Fields<'a>),
    Array,
    Other,
}

/// The members of a message object that decide what it is.
#[derive(Default)]
pub(super) struct Fields<'a> {
    /// `Some(true)` when `jsonrpc` is the string "2.0".
    pub jsonrpc: Option<bool>,
    pub method: Option<Member<'a>>,
    pub id: Option<Value>,
    /// `Err(())` when params is present but not an object.
    pub params: Option<Result<Params<'a>, ()>>,
    /// `result` or `error` is present (a client's response).
    pub result_or_error: bool,
}

impl<'a> Fields<'a> {
    /// Params were read as [`CallParams`] for a `method` that a later duplicate replaced: the
    /// caller must read the body again as a `Value` (see [`from_value`]).
    pub(super) fn call_params_misread(&self) -> bool {
        let call = matches!(self.params, Some(Ok(Params::Call(_))));
        call && !matches!(&self.method, Some(Member::Str(m)) if m == TOOLS_CALL)
    }
}

/// Reads a body. `Err` is the parser's error, as `serde_json::from_slice::<Value>` would give it.
pub(super) fn read(body: &[u8]) -> Result<Shape<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let shape = Shape::deserialize(&mut de)?;
    de.end()?;
    Ok(shape)
}

/// The same members from a `Value` object: the slow path for bodies [`read`] cannot type.
pub(super) fn from_value(mut object: Map<String, Value>) -> Fields<'static> {
    let member = |value: Value| match value {
        Value::String(s) => Member::Str(Cow::Owned(s)),
        _ => Member::Other,
    };
    Fields {
        jsonrpc: object.get("jsonrpc").map(|v| v.as_str() == Some("2.0")),
        method: object.remove("method").map(member),
        id: object.remove("id"),
        params: object.remove("params").map(|p| match p {
            Value::Object(map) => Ok(Params::Object(map)),
            _ => Err(()),
        }),
        result_or_error: object.contains_key("result") || object.contains_key("error"),
    }
}

impl<'de> Deserialize<'de> for Shape<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => fields.jsonrpc = Some(map.next_value::<Member>()?.is("2.0")),
                Key::Method => fields.method = Some(map.next_value()?),
                Key::Id => fields.id = Some(map.next_value()?),
                Key::Params => {
                    let call = matches!(&fields.method, Some(Member::Str(m)) if m == TOOLS_CALL);
                    fields.params = Some(if call {
                        map.next_value::<CallParamsField>()?.0.map(Params::Call)
                    } else {
                        match map.next_value::<Value>()? {
                            Value::Object(object) => Ok(Params::Object(object)),
                            _ => Err(()),
                        }
                    });
                }
                Key::Result | Key::Error => {
                    map.next_value::<Skip>()?;
                    fields.result_or_error = true;
                }
                Key::Other => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Shape::Object(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq)?;
        Ok(Shape::Array)
    }

    scalars_as!(Shape::Other);
}

/// The message members [`ShapeVisitor`] tells apart.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Member<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl<'de> Visitor<'de> for MemberVisitor {
            type Value = Member<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Member::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Member::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(Member::Str(Cow::Owned(s)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Member::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Member::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Member::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Member::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Member::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|()| Member::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map).map(|()| Member::Other)
            }
        }
        deserializer.deserialize_any(MemberVisitor)
    }
}

/// `tools/call` params: `Err(())` when they are not an object.
struct CallParamsField<'a>(Result<CallParams<'a>, ()>);

impl<'de> Deserialize<'de> for CallParamsField<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallVisitor;
        impl<'de> Visitor<'de> for CallVisitor {
            type Value = CallParamsField<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut params = CallParams::default();
                while let Some(key) = map.next_key::<CallKey>()? {
                    match key {
                        CallKey::Name => params.name = Some(map.next_value()?),
                        CallKey::Arguments => params.arguments = Some(map.next_value()?),
                        CallKey::Task => params.task = TaskParam::from_value(map.next_value()?),
                        CallKey::Meta => params.meta = Some(map.next_value()?),
                        CallKey::Other => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(CallParamsField(Ok(params)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|()| CallParamsField(Err(())))
            }
            scalars_as!(CallParamsField(Err(())));
        }
        deserializer.deserialize_any(CallVisitor)
    }
}

/// The `tools/call` params members `CallVisitor` tells apart.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum CallKey {
    Name,
    Arguments,
    Task,
    #[serde(rename = "_meta")]
    Meta,
    #[serde(other)]
    Other,
}

/// Any JSON value, parsed exactly as a `Value` would be (same checks) and dropped.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SkipVisitor;
        impl<'de> Visitor<'de> for SkipVisitor {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Skip, A::Error> {
                drain_seq(seq).map(|()| Skip)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Skip, A::Error> {
                drain_map(map).map(|()| Skip)
            }
            scalars_as!(Skip);
        }
        deserializer.deserialize_any(SkipVisitor)
    }
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Skip>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<Skip, Skip>()?.is_some() {}
    Ok(())
}
