//! `breaking_changes`: what a new document changes that breaks a client written against the
//! old one, which the snapshot test holds against `CHANGELOG.md`.

/// The changes from the `old` document to the `new` one that break a client written against
/// `old` (the versioning policy in README: such changes need a new version, or at least an entry
/// in `CHANGELOG.md`): an operation removed, a schema removed, a field of a schema removed or
/// given another type, an enum value removed; in a request body (a schema named `...In`) a field
/// newly required, a field that took `null` and no longer does, or one newly limited to a list
/// of values; in an answer, a field that may now be left out or `null`. A schema's fields are
/// read through its `allOf` (its own object and the rules added to it), so wrapping a schema in
/// one changes nothing by itself. Each is named by the key the changelog must quote:
/// `GET /v1/x`, `Schema`, `Schema.field`, `Schema: value`; sorted, each once.
pub fn breaking_changes(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let mut changes = Vec::new();
    let empty = serde_json::Map::new();
    let object = |v: &Value| v.as_object().cloned().unwrap_or_default();
    for (path, methods) in old["paths"].as_object().unwrap_or(&empty) {
        for method in object(methods).keys() {
            if new["paths"][path][method].is_null() {
                changes.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    let new_schemas = object(&new["components"]["schemas"]);
    for (name, before) in old["components"]["schemas"].as_object().unwrap_or(&empty) {
        let Some(after) = new_schemas.get(name) else {
            changes.push(name.clone());
            continue;
        };
        let request = name.ends_with("In");
        let (was, now) = (Fields::of(old, before), Fields::of(new, after));
        for (field, before) in &was.properties {
            let key = format!("{name}.{field}");
            let Some(after) = now.properties.get(field) else {
                changes.push(key);
                continue;
            };
            let (b, a) = (Shape::of(before), Shape::of(after));
            let retyped = b.types != a.types || b.refs != a.refs;
            let narrowed = request
                && ((b.nullable && !a.nullable)
                    || (b.values.is_none() && a.values.is_some())
                    || b.values
                        .as_ref()
                        .zip(a.values.as_ref())
                        .is_some_and(|(b, a)| b.iter().any(|v| !a.contains(v) && !v.is_null())));
            let widened = !request && !b.nullable && a.nullable;
            if retyped || narrowed || widened {
                changes.push(key);
            }
        }
        if request {
            for field in now.required.difference(&was.required) {
                changes.push(format!("{name}.{field}"));
            }
        } else {
            for field in was.required.difference(&now.required) {
                if now.properties.contains_key(field) {
                    changes.push(format!("{name}.{field}"));
                }
            }
        }
        let values = |v: &Value| v["enum"].as_array().cloned().unwrap_or_default();
        let after_values = values(after);
        for value in values(before) {
            if !after_values.contains(&value) {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                changes.push(format!("{name}: {value}"));
            }
        }
    }
    changes.sort();
    changes.dedup();
    changes
}

/// A schema's fields as a client reads them: its own properties and required fields with those
/// of its `allOf`'s members (objects, or schemas of the document they name).
#[derive(Default)]
pub(super) struct Fields {
    properties: std::collections::BTreeMap<String, serde_json::Value>,
    required: std::collections::BTreeSet<String>,
}

impl Fields {
    fn of(doc: &serde_json::Value, schema: &serde_json::Value) -> Fields {
        let mut fields = Fields::default();
        fields.add(doc, schema, 0);
        fields
    }

    fn add(&mut self, doc: &serde_json::Value, schema: &serde_json::Value, depth: usize) {
        if depth > 8 {
            return;
        }
        if let Some(target) = schema["$ref"].as_str() {
            if let Some(name) = target.strip_prefix("#/components/schemas/") {
                self.add(doc, &doc["components"]["schemas"][name], depth + 1);
            }
            return;
        }
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            self.properties
                .entry(field.clone())
                .or_insert_with(|| property.clone());
        }
        for field in schema["required"].as_array().into_iter().flatten() {
            if let Some(field) = field.as_str() {
                self.required.insert(field.to_owned());
            }
        }
        for member in schema["allOf"].as_array().into_iter().flatten() {
            self.add(doc, member, depth + 1);
        }
    }
}

/// What a field holds: its types but `null`, the schemas it names, whether it may be `null`,
/// and the values it is limited to (if any), through `oneOf`, `anyOf` and `allOf`.
#[derive(Default)]
struct Shape {
    types: std::collections::BTreeSet<String>,
    refs: std::collections::BTreeSet<String>,
    nullable: bool,
    values: Option<Vec<serde_json::Value>>,
}

impl Shape {
    fn of(schema: &serde_json::Value) -> Shape {
        let mut shape = Shape::default();
        shape.add(schema);
        shape
    }

    fn add(&mut self, schema: &serde_json::Value) {
        if let Some(target) = schema["$ref"].as_str() {
            self.refs.insert(target.to_owned());
        }
        let types = match &schema["type"] {
            serde_json::Value::String(t) => vec![t.clone()],
            serde_json::Value::Array(list) => list
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for t in types {
            if t == "null" {
                self.nullable = true;
            } else {
                self.types.insert(t);
            }
        }
        if let Some(values) = schema["enum"].as_array() {
            if values.iter().any(serde_json::Value::is_null) {
                self.nullable = true;
            }
            self.values
                .get_or_insert_with(Vec::new)
                .extend(values.iter().cloned());
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            for member in schema[key].as_array().into_iter().flatten() {
                self.add(member);
            }
        }
    }
}

/// The breaking changes `changelog` does not record: each must be quoted in it (in backticks).
pub fn unrecorded<'a>(changes: &'a [String], changelog: &str) -> Vec<&'a str> {
    changes
        .iter()
        .map(String::as_str)
        .filter(|key| !changelog.contains(&format!("`{key}`")))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> serde_json::Value {
        json!({
            "paths": {"/v1/account": {"get": {}, "patch": {}}},
            "components": {"schemas": {
                "Account": {"type": "object", "properties": {
                    "uuid": {"type": "string"}, "status": {"$ref": "#/components/schemas/Status"}
                }, "required": ["uuid"]},
                "Status": {"type": "string", "enum": ["active", "cancelled"]},
                "AccountIn": {"type": "object", "properties": {"email": {"type": "string"}}}
            }}
        })
    }

    #[test]
    fn additions_break_nothing() {
        let mut new = doc();
        new["paths"]["/v1/other"] = json!({"get": {}});
        new["components"]["schemas"]["Account"]["properties"]["phone"] = json!({"type": "string"});
        new["components"]["schemas"]["Account"]["required"] = json!(["uuid", "phone"]);
        new["components"]["schemas"]["Status"]["enum"] = json!(["active", "cancelled", "ready"]);
        assert!(breaking_changes(&doc(), &new).is_empty());
        assert!(breaking_changes(&doc(), &doc()).is_empty());
    }

    #[test]
    fn a_schema_wrapped_in_all_of_is_read_through_it() {
        let mut new = doc();
        let account_in = new["components"]["schemas"]["AccountIn"].clone();
        new["components"]["schemas"]["AccountIn"] =
            json!({"allOf": [account_in, {"anyOf": [{"required": ["email"]}, {}]}]});
        let account = new["components"]["schemas"]["Account"].clone();
        new["components"]["schemas"]["Account"] = json!({"allOf": [account, {}]});
        assert!(breaking_changes(&doc(), &new).is_empty());

        // A field required by the object inside the `allOf` is required.
        new["components"]["schemas"]["AccountIn"]["allOf"][0]["required"] = json!(["email"]);
        assert_eq!(breaking_changes(&doc(), &new), ["AccountIn.email"]);
    }

    #[test]
    fn a_request_field_that_no_longer_takes_null_or_any_value_breaks() {
        let mut old = doc();
        old["components"]["schemas"]["AccountIn"]["properties"]["status"] =
            json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Status"}]});
        old["components"]["schemas"]["AccountIn"]["properties"]["name"] =
            json!({"type": ["string", "null"]});
        let mut new = old.clone();
        new["components"]["schemas"]["AccountIn"]["properties"]["status"] =
            json!({"$ref": "#/components/schemas/Status"});
        assert_eq!(breaking_changes(&old, &new), ["AccountIn.status"]);

        let mut new = old.clone();
        new["components"]["schemas"]["AccountIn"]["properties"]["name"] = json!({"type": "string"});
        new["components"]["schemas"]["AccountIn"]["properties"]["email"] =
            json!({"type": "string", "enum": ["a@example.com"]});
        assert_eq!(
            breaking_changes(&old, &new),
            ["AccountIn.email", "AccountIn.name"]
        );
        // Taking more is no break.
        assert!(breaking_changes(&new, &old).is_empty());
    }

    #[test]
    fn an_answer_field_that_may_be_missing_or_null_breaks() {
        let mut new = doc();
        new["components"]["schemas"]["Account"]["required"] = json!([]);
        assert_eq!(breaking_changes(&doc(), &new), ["Account.uuid"]);
        let mut new = doc();
        new["components"]["schemas"]["Account"]["properties"]["uuid"] =
            json!({"type": ["string", "null"]});
        assert_eq!(breaking_changes(&doc(), &new), ["Account.uuid"]);
        // An answer that says less often (a field now always there) breaks nothing.
        assert!(breaking_changes(&new, &doc()).is_empty());
    }

    #[test]
    fn removals_renames_and_new_requirements_break() {
        let mut new = doc();
        new["paths"]["/v1/account"] = json!({"get": {}});
        new["components"]["schemas"]["Account"]["properties"] =
            json!({"uuid": {"type": "integer"}, "state": {"$ref": "#/components/schemas/Status"}});
        new["components"]["schemas"]["Status"]["enum"] = json!(["active"]);
        new["components"]["schemas"]["AccountIn"]["required"] = json!(["email"]);
        let changes = breaking_changes(&doc(), &new);
        assert_eq!(
            changes,
            [
                "Account.status",
                "Account.uuid",
                "AccountIn.email",
                "PATCH /v1/account",
                "Status: cancelled"
            ]
        );
        let changelog = "- `PATCH /v1/account` removed\n- `Account.status` renamed `state`";
        assert_eq!(
            unrecorded(&changes, changelog),
            ["Account.uuid", "AccountIn.email", "Status: cancelled"]
        );
    }
}
