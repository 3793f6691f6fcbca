//! Reading JSON in the browser: the browser's own `JSON.parse` reads the text, and each type a
//! flow reads takes its fields out of the value it returns (`Read`), by name, one call each.
//! Compiled with `serde_json`'s parser, every type a flow read carried its own copy of a JSON
//! parser; read through serde from the parsed value, each still carried serde's generic
//! reading (a visitor matching each key against its field names, duplicate and missing field
//! checks, the drops of half-read structs): a fifth of a flow's bundle. A flow never shows why
//! an answer could not be read (it reports the server as unreachable, see `client`), so a
//! failure here carries no message at all. Builds without the browser read the same values
//! through serde_json, which the tests use to check each reader against the type's serde shape.

/// An answer that is not JSON, or not of the shape read.
#[derive(Debug)]
pub struct Invalid;

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid JSON")
    }
}

impl std::error::Error for Invalid {}

/// A type read out of a JSON value: `None` when the value does not have its shape. As serde
/// reads them: a field that is missing or `null` is `None` for an `Option`, else the value is
/// not of the shape (fields with a default take it); members not read are skipped.
pub trait Read: Sized {
    fn read(value: &Value) -> Option<Self>;
}

/// Reads `text`, JSON, as a `T`.
pub fn from_str<T: Read>(text: &str) -> Result<T, Invalid> {
    T::read(&parse(text)?).ok_or(Invalid)
}

/// Parses `text`, JSON.
pub fn parse(text: &str) -> Result<Value, Invalid> {
    Value::parse(text).ok_or(Invalid)
}

/// A parsed JSON value.
#[cfg(feature = "hydrate")]
pub struct Value(wasm_bindgen::JsValue);

/// A parsed JSON value.
#[cfg(not(feature = "hydrate"))]
pub struct Value(serde_json::Value);

#[cfg(feature = "hydrate")]
impl Value {
    fn parse(text: &str) -> Option<Value> {
        js_sys::JSON::parse(text).ok().map(Value)
    }

    /// The member `key` of an object; `None` when it is missing or `null`, or this is not an
    /// object.
    pub fn get(&self, key: &str) -> Option<Value> {
        if !self.0.is_object() {
            return None;
        }
        let value = js_sys::Reflect::get(&self.0, &wasm_bindgen::JsValue::from_str(key)).ok()?;
        (!value.is_null() && !value.is_undefined()).then_some(Value(value))
    }

    pub fn as_str(&self) -> Option<String> {
        self.0.as_string()
    }

    /// A whole number (JSON has one kind of number; serde's integer types take whole ones
    /// only, within 2^63: the cast below is exact within these bounds).
    pub fn as_int(&self) -> Option<i64> {
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        let n = self.0.as_f64()?;
        (n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n)).then_some(n as i64)
    }

    pub fn as_bool(&self) -> Option<bool> {
        self.0.as_bool()
    }

    /// An array's items.
    pub fn items(&self) -> Option<Vec<Value>> {
        use wasm_bindgen::JsCast;
        if !js_sys::Array::is_array(&self.0) {
            return None;
        }
        let array: &js_sys::Array = self.0.unchecked_ref();
        Some(array.iter().map(Value).collect())
    }
}

#[cfg(not(feature = "hydrate"))]
impl Value {
    fn parse(text: &str) -> Option<Value> {
        serde_json::from_str(text).ok().map(Value)
    }

    /// The member `key` of an object; `None` when it is missing or `null`, or this is not an
    /// object.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.0.get(key).filter(|v| !v.is_null()).cloned().map(Value)
    }

    pub fn as_str(&self) -> Option<String> {
        self.0.as_str().map(str::to_owned)
    }

    pub fn as_int(&self) -> Option<i64> {
        self.0.as_i64()
    }

    pub fn as_bool(&self) -> Option<bool> {
        self.0.as_bool()
    }

    /// An array's items.
    pub fn items(&self) -> Option<Vec<Value>> {
        Some(self.0.as_array()?.iter().cloned().map(Value).collect())
    }
}

/// The members of an object, by type.
impl Value {
    pub fn str(&self, key: &str) -> Option<String> {
        self.get(key)?.as_str()
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key)?.as_int()
    }

    /// A whole number from 0 to `u32::MAX`.
    pub fn u32(&self, key: &str) -> Option<u32> {
        u32::try_from(self.int(key)?).ok()
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.get(key)?.as_bool()
    }

    pub fn read<T: Read>(&self, key: &str) -> Option<T> {
        T::read(&self.get(key)?)
    }

    /// An array of `T`s.
    pub fn list<T: Read>(&self, key: &str) -> Option<Vec<T>> {
        self.read(key)
    }
}

impl Read for String {
    fn read(value: &Value) -> Option<Self> {
        value.as_str()
    }
}

impl<T: Read> Read for Vec<T> {
    fn read(value: &Value) -> Option<Self> {
        value.items()?.iter().map(T::read).collect()
    }
}

/// An answer whose content the flow does not read.
impl Read for () {
    fn read(_: &Value) -> Option<Self> {
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_as_serde_reads_them() {
        let v =
            Value::parse(r#"{"s":"a","n":-3,"u":7,"b":true,"z":null,"l":["x","y"],"o":{"s":"b"}}"#)
                .expect("json");
        assert_eq!(v.str("s").as_deref(), Some("a"));
        assert_eq!(v.int("n"), Some(-3));
        assert_eq!(v.u32("n"), None);
        assert_eq!(v.u32("u"), Some(7));
        assert_eq!(v.bool("b"), Some(true));
        assert_eq!(v.str("z"), None);
        assert_eq!(v.str("missing"), None);
        assert_eq!(v.str("n"), None);
        assert_eq!(
            v.list::<String>("l"),
            Some(vec!["x".to_owned(), "y".to_owned()])
        );
        assert_eq!(v.get("o").and_then(|o| o.str("s")).as_deref(), Some("b"));
        assert!(from_str::<String>("{").is_err());
        assert!(from_str::<Vec<String>>(r#"["a",1]"#).is_err());
        assert!(from_str::<()>("{}").is_ok());
    }
}
