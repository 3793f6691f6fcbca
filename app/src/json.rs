//! Reading JSON in the browser: the browser's own `JSON.parse` reads the text, and serde reads
//! the flows' types out of the value it returns. Compiled with `serde_json`'s parser, every type
//! a flow reads carried its own copy of a JSON parser, and every failure a message naming what
//! was found where (with the float formatting that needs): that was more than a tenth of a
//! flow's bundle. A flow never shows why an answer could not be read (it reports the server as
//! unreachable, see `client`), so a failure here carries no message at all.

use serde::de::{
    self, value::StringDeserializer, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor,
};
use wasm_bindgen::{JsCast, JsValue};

/// An answer that is not JSON, or not of the shape read.
#[derive(Debug)]
pub struct Invalid;

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid JSON")
    }
}

impl std::error::Error for Invalid {}

impl de::Error for Invalid {
    // The message is never shown: not building it keeps its formatting out of the bundle.
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        Invalid
    }
}

/// Reads `text`, JSON, as a `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Invalid> {
    let value = js_sys::JSON::parse(text).map_err(|_| Invalid)?;
    T::deserialize(Value(value))
}

/// A value `JSON.parse` returned.
struct Value(JsValue);

impl Value {
    fn object(self) -> Result<js_sys::Object, Invalid> {
        if self.0.is_object() && !js_sys::Array::is_array(&self.0) {
            Ok(self.0.unchecked_into())
        } else {
            Err(Invalid)
        }
    }
}

impl<'de> de::Deserializer<'de> for Value {
    type Error = Invalid;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Invalid> {
        let v = self.0;
        if let Some(s) = v.as_string() {
            visitor.visit_string(s)
        } else if let Some(b) = v.as_bool() {
            visitor.visit_bool(b)
        } else if let Some(n) = v.as_f64() {
            // JSON has one kind of number; serde's integer types take whole ones only.
            // (2^63 as f64: the casts below are exact within these bounds.)
            const LIMIT: f64 = 9_223_372_036_854_775_808.0;
            if n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n) {
                visitor.visit_i64(n as i64)
            } else {
                visitor.visit_f64(n)
            }
        } else if v.is_null() || v.is_undefined() {
            visitor.visit_unit()
        } else if js_sys::Array::is_array(&v) {
            visitor.visit_seq(Seq {
                items: v.unchecked_into(),
                next: 0,
            })
        } else {
            Value(v).deserialize_map(visitor)
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Invalid> {
        if self.0.is_null() || self.0.is_undefined() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Invalid> {
        visitor.visit_newtype_struct(self)
    }

    /// Every key of the object (a map, or a struct with a flattened part).
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Invalid> {
        let object = self.object()?;
        let keys = js_sys::Object::keys(&object)
            .iter()
            .filter_map(|k| k.as_string())
            .collect();
        visitor.visit_map(Fields::new(object, keys))
    }

    /// The struct's own fields only: the rest of the object is never read.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Invalid> {
        let object = self.object()?;
        let keys = fields.iter().map(|&f| f.to_owned()).collect();
        visitor.visit_map(Fields::new(object, keys))
    }

    /// `"Variant"`, or `{"Variant": value}` for a variant with data.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Invalid> {
        if let Some(name) = self.0.as_string() {
            return visitor.visit_enum(IntoDeserializer::<Invalid>::into_deserializer(name));
        }
        let object = self.object()?;
        let keys = js_sys::Object::keys(&object);
        if keys.length() != 1 {
            return Err(Invalid);
        }
        let name = keys.get(0).as_string().ok_or(Invalid)?;
        let value = js_sys::Reflect::get(&object, &keys.get(0)).map_err(|_| Invalid)?;
        visitor.visit_enum(Variant {
            name,
            value: Value(value),
        })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Invalid> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct identifier
    }
}

/// An array's items in turn.
struct Seq {
    items: js_sys::Array,
    next: u32,
}

impl<'de> de::SeqAccess<'de> for Seq {
    type Error = Invalid;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Invalid> {
        if self.next >= self.items.length() {
            return Ok(None);
        }
        let item = self.items.get(self.next);
        self.next += 1;
        seed.deserialize(Value(item)).map(Some)
    }
}

/// An object's entries for the keys given, in turn; a key the object lacks is skipped (serde
/// then uses the field's default, or fails as for any missing field).
struct Fields {
    object: js_sys::Object,
    keys: Vec<String>,
    next: usize,
    value: Option<JsValue>,
}

impl Fields {
    fn new(object: js_sys::Object, keys: Vec<String>) -> Self {
        Fields {
            object,
            keys,
            next: 0,
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = Invalid;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Invalid> {
        while let Some(key) = self.keys.get(self.next) {
            self.next += 1;
            let value =
                js_sys::Reflect::get(&self.object, &JsValue::from_str(key)).map_err(|_| Invalid)?;
            if !value.is_undefined() {
                self.value = Some(value);
                let key: StringDeserializer<Invalid> = key.clone().into_deserializer();
                return seed.deserialize(key).map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Invalid> {
        let value = self.value.take().ok_or(Invalid)?;
        seed.deserialize(Value(value))
    }
}

/// `{"Variant": value}`.
struct Variant {
    name: String,
    value: Value,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Invalid;
    type Variant = Value;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Value), Invalid> {
        let name: StringDeserializer<Invalid> = self.name.into_deserializer();
        Ok((seed.deserialize(name)?, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for Value {
    type Error = Invalid;

    fn unit_variant(self) -> Result<(), Invalid> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Invalid> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Invalid> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Invalid> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}
