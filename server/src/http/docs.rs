//! The API reference as a page, `GET /docs/api`: the OpenAPI document that `/v1/openapi.json`
//! serves, rendered for reading. Operations grouped by tag, each with its parameters, request
//! body and answers, the fields of every shape, and an example of each body built from its
//! schema (the document's own example where it gives one). Rendered once, from the same
//! document, so the page can never say something the JSON does not.

use axum::{
    http::{
        header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS},
        HeaderValue,
    },
    response::{Html, IntoResponse, Response},
    routing::get,
    Router,
};
use leptos::prelude::*;
use serde_json::{json, Map, Value};

use super::{openapi, AppState};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];
/// How deep an example follows references (the shapes nest, and some refer to themselves).
const EXAMPLE_DEPTH: usize = 6;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/docs/api", get(page))
        .route("/docs/api.css", get(stylesheet))
}

async fn page() -> Response {
    static PAGE: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| render(&openapi::document()));
    let mut response = Html(PAGE.as_str()).into_response();
    let h = response.headers_mut();
    h.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'none'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

async fn stylesheet() -> Response {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../../style/api-docs.css"),
    )
        .into_response()
}

/// What an unknown reference resolves to.
static NULL: Value = Value::Null;

/// The schema a `$ref` names, and its name.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> (Option<&'a str>, &'a Value) {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap_or(r);
            let found = doc
                .pointer(&format!("/components/schemas/{name}"))
                .unwrap_or(&NULL);
            (Some(name), found)
        }
        None => (None, schema),
    }
}

/// The types a schema allows, without `null`.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

fn nullable(schema: &Value) -> bool {
    matches!(schema.get("type"), Some(Value::Array(ts)) if ts.iter().any(|t| t == "null"))
        || alternatives(schema)
            .iter()
            .any(|s| s.get("type") == Some(&json!("null")))
}

fn alternatives(schema: &Value) -> Vec<&Value> {
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .collect()
}

/// A schema's type as a reader says it: `string (uuid)`, `array of Plan`, `one of: a, b`.
fn type_name(doc: &Value, schema: &Value) -> String {
    if let (Some(name), _) = resolve(doc, schema) {
        return name.to_owned();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of: {}", values.join(", "));
    }
    let alts: Vec<String> = alternatives(schema)
        .into_iter()
        .filter(|s| s.get("type") != Some(&json!("null")))
        .map(|s| type_name(doc, s))
        .collect();
    if !alts.is_empty() {
        return alts.join(" or ");
    }
    let mut out: Vec<String> = types(schema)
        .into_iter()
        .map(|t| match t {
            "array" => format!(
                "array of {}",
                schema
                    .get("items")
                    .map_or_else(|| "any".to_owned(), |i| type_name(doc, i))
            ),
            "string" => match schema.get("format").and_then(Value::as_str) {
                Some(f) => format!("string ({f})"),
                None => "string".to_owned(),
            },
            other => other.to_owned(),
        })
        .collect();
    if out.is_empty() {
        out.push("any".to_owned());
    }
    out.join(" or ")
}

/// An example of a value of `schema`.
fn example(doc: &Value, schema: &Value, depth: usize) -> Value {
    if let Some(e) = schema.get("example") {
        return e.clone();
    }
    if let Some(e) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return e.clone();
    }
    if depth == 0 {
        return Value::Null;
    }
    if let (Some(_), found) = resolve(doc, schema) {
        return example(doc, found, depth - 1);
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|v| v.iter().find(|v| !v.is_null()))
    {
        return first.clone();
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in all {
            if let Value::Object(o) = example(doc, part, depth - 1) {
                merged.extend(o);
            }
        }
        return Value::Object(merged);
    }
    if let Some(alt) = alternatives(schema)
        .into_iter()
        .find(|s| s.get("type") != Some(&json!("null")))
    {
        return example(doc, alt, depth - 1);
    }
    match types(schema).first().copied() {
        Some("object") | None if schema.get("properties").is_some() => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for (name, prop) in props.into_iter().flatten() {
                out.insert(name.clone(), example(doc, prop, depth - 1));
            }
            Value::Object(out)
        }
        Some("object") => json!({}),
        Some("array") => match schema.get("items") {
            Some(items) => json!([example(doc, items, depth - 1)]),
            None => json!([]),
        },
        Some("string") => Value::from(match schema.get("format").and_then(Value::as_str) {
            Some("uuid") => "6f1c1f4e-8a3b-4c7e-9d2a-1b5e0c7d9a21",
            Some("date") => "2027-02-01",
            Some("date-time") => "2027-02-01T15:04:05.000Z",
            Some("email") => "customer@example.com",
            Some("uri") | Some("url") => "https://partner.example/path",
            _ => "string",
        }),
        Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(0)),
        Some("number") => json!(0),
        Some("boolean") => json!(true),
        _ => Value::Null,
    }
}

/// The fields of an object schema, `allOf` parts included: name, type, required, description.
fn fields(doc: &Value, schema: &Value) -> Vec<(String, String, bool, String)> {
    let (_, schema) = resolve(doc, schema);
    let mut out = Vec::new();
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for part in all {
            out.extend(fields(doc, part));
        }
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut kind = type_name(doc, prop);
        if nullable(prop) {
            kind.push_str(", may be null");
        }
        let about = prop
            .get("description")
            .or_else(|| resolve(doc, prop).1.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        out.push((name.clone(), kind, required.contains(&name.as_str()), about));
    }
    out
}

/// A line of the document's text, its `code` spans as code.
fn inline(text: &str) -> impl IntoView {
    text.replace('\n', " ")
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            let part = part.to_owned();
            if i % 2 == 1 {
                view! { <code>{part}</code> }.into_any()
            } else {
                part.into_any()
            }
        })
        .collect_view()
}

/// Text of the document in paragraphs (blank lines between).
fn paragraphs(text: &str) -> impl IntoView {
    text.split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| view! { <p>{inline(p.trim())}</p> })
        .collect_view()
}

fn fields_table(rows: Vec<(String, String, bool, String)>) -> impl IntoView {
    (!rows.is_empty()).then(|| {
        let rows = rows
            .into_iter()
            .map(|(name, kind, required, about)| {
                let required = if required { "required" } else { "optional" };
                view! {
                    <tr>
                        <td data-label="Field"><code>{name}</code></td>
                        <td data-label="Type">{kind}</td>
                        <td data-label="Required">{required}</td>
                        // One child, so that a phone's two-column cell keeps the text whole.
                        <td data-label="About"><span>{inline(&about)}</span></td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="scroll">
                <table>
                    <thead><tr><th scope="col">"Field"</th><th scope="col">"Type"</th><th scope="col">"Required"</th><th scope="col">"About"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
    })
}

fn example_block(label: &'static str, value: &Value) -> impl IntoView {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    view! {
        <details class="example" open>
            <summary>{label}</summary>
            <pre><code>{text}</code></pre>
        </details>
    }
}

/// A body (request or answer) of `content`: its shape, its fields and an example.
fn body_view(doc: &Value, content: Option<&Value>, label: &'static str) -> Option<AnyView> {
    let (media, body) = content?.as_object()?.iter().next()?;
    let schema = body.get("schema")?;
    let kind = type_name(doc, schema);
    let media = media.clone();
    if media != "application/json" {
        return Some(view! { <p>{media} " · " {kind}</p> }.into_any());
    }
    let (name, _) = resolve(doc, schema);
    let shape = match name {
        Some(n) => {
            let href = format!("#schema-{n}");
            let n = n.to_owned();
            view! { <a href=href><code>{n}</code></a> }.into_any()
        }
        None => view! { <code>{kind}</code> }.into_any(),
    };
    let sample = body
        .get("example")
        .cloned()
        .unwrap_or_else(|| example(doc, schema, EXAMPLE_DEPTH));
    Some(
        view! {
            <p>"JSON: " {shape}</p>
            {fields_table(fields(doc, schema))}
            {example_block(label, &sample)}
        }
        .into_any(),
    )
}

fn operation_view(doc: &Value, method: &str, path: &str, op: &Value) -> impl IntoView {
    let id = op
        .get("operationId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{method}-{path}"), str::to_owned);
    let id = format!(
        "op-{}",
        id.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    );
    let summary = op
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let description = op
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let security: Vec<String> = op
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys().cloned())
        .collect();
    let auth = (!security.is_empty()).then(|| {
        let s = security.join(" or ");
        view! { <p class="auth">"Authorization: " <code>{s}</code></p> }
    });
    let params: Vec<(String, String, bool, String)> = op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            let place = p.get("in").and_then(Value::as_str).unwrap_or("");
            let kind = p
                .get("schema")
                .map_or_else(|| "string".to_owned(), |s| type_name(doc, s));
            (
                format!("{name} ({place})"),
                kind,
                p.get("required").and_then(Value::as_bool).unwrap_or(false),
                p.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    let params = (!params.is_empty()).then(|| {
        view! { <h4>"Parameters"</h4> {fields_table(params)} }
    });
    let request = body_view(
        doc,
        op.pointer("/requestBody/content"),
        "Example request body",
    )
    .map(|b| view! { <h4>"Request body"</h4> {b} });
    let responses = op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(status, answer)| {
            let (_, answer) = resolve_response(doc, answer);
            let about = answer
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let success = status.starts_with('2');
            let body = success
                .then(|| body_view(doc, answer.get("content"), "Example answer"))
                .flatten();
            let status = status.clone();
            view! {
                <li>
                    <strong>{status}</strong> " " {inline(&about)}
                    {body}
                </li>
            }
        })
        .collect_view();
    let method_upper = method.to_uppercase();
    let class = format!("method {method}");
    let path = path.to_owned();
    view! {
        <section class="op" id=id>
            <h3><span class=class>{method_upper}</span> " " <code>{path}</code></h3>
            <div class="summary">{paragraphs(&summary)}</div>
            {paragraphs(&description)}
            {auth}
            {params}
            {request}
            <h4>"Answers"</h4>
            <ul class="answers">{responses}</ul>
        </section>
    }
}

fn resolve_response<'a>(doc: &'a Value, answer: &'a Value) -> (Option<&'a str>, &'a Value) {
    match answer.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap_or(r);
            let found = doc
                .pointer(&format!("/components/responses/{name}"))
                .unwrap_or(&NULL);
            (Some(name), found)
        }
        None => (None, answer),
    }
}

/// The page for the OpenAPI document `json`.
pub fn render(json: &str) -> String {
    let doc: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let title = doc
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("API")
        .to_owned();
    let version = doc
        .pointer("/info/version")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let intro = doc
        .pointer("/info/description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    // Operations by tag, in the document's tag order; untagged ones last.
    let mut tags: Vec<(String, String)> = doc
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                t.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    let mut ops: Vec<(String, String, String, &Value)> = Vec::new();
    for (path, item) in doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                let tag = op
                    .pointer("/tags/0")
                    .and_then(Value::as_str)
                    .unwrap_or("other")
                    .to_owned();
                if !tags.iter().any(|(t, _)| *t == tag) {
                    tags.push((tag.clone(), String::new()));
                }
                ops.push((tag, method.to_owned(), path.clone(), op));
            }
        }
    }
    let contents = tags
        .iter()
        .filter(|(t, _)| ops.iter().any(|(tag, ..)| tag == t))
        .map(|(t, _)| {
            let href = format!("#tag-{t}");
            let t = t.clone();
            view! { <li><a href=href>{t}</a></li> }
        })
        .collect_view();
    let groups = tags
        .iter()
        .filter(|(t, _)| ops.iter().any(|(tag, ..)| tag == t))
        .map(|(t, about)| {
            let id = format!("tag-{t}");
            let name = t.clone();
            let about = about.clone();
            let list = ops
                .iter()
                .filter(|(tag, ..)| tag == t)
                .map(|(_, method, path, op)| operation_view(&doc, method, path, op))
                .collect_view();
            view! {
                <section class="tag" id=id>
                    <h2>{name}</h2>
                    {paragraphs(&about)}
                    {list}
                </section>
            }
        })
        .collect_view();
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| {
            let id = format!("schema-{name}");
            let about = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let rows = fields(&doc, schema);
            let sample = (!rows.is_empty())
                .then(|| example_block("Example", &example(&doc, schema, EXAMPLE_DEPTH)));
            let kind = rows.is_empty().then(|| {
                let k = type_name(&doc, schema);
                view! { <p>"Type: " <code>{k}</code></p> }
            });
            let name = name.clone();
            view! {
                <section class="schema" id=id>
                    <h3><code>{name}</code></h3>
                    {paragraphs(&about)}
                    {kind}
                    {fields_table(rows)}
                    {sample}
                </section>
            }
        })
        .collect_view();
    let heading = title.clone();
    let version = format!("Version {version}.");
    let page_title = format!("{title} reference");
    crate::http::html::document(view! {
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>{page_title}</title>
                <link rel="stylesheet" href="/docs/api.css"/>
            </head>
            <body>
                <header>
                    <h1>{heading}</h1>
                    <p>{version} " The same document as JSON: " <a href="/v1/openapi.json"><code>"/v1/openapi.json"</code></a></p>
                </header>
                <nav aria-label="Contents">
                    <h2>"Contents"</h2>
                    <ul>{contents}<li><a href="#schemas">"Shapes"</a></li></ul>
                </nav>
                <main>
                    {paragraphs(&intro)}
                    {groups}
                    <section id="schemas">
                        <h2>"Shapes"</h2>
                        {schemas}
                    </section>
                </main>
            </body>
        </html>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "components": {"schemas": {
                "Plan": {"type": "object", "required": ["plan_uuid"], "properties": {
                    "plan_uuid": {"type": "string", "format": "uuid"},
                    "term_months": {"type": ["integer", "null"], "minimum": 1},
                    "plan_type": {"type": "string", "enum": ["fixed", "month_to_month"]}
                }},
                "Plans": {"type": "object", "properties": {
                    "plans": {"type": "array", "items": {"$ref": "#/components/schemas/Plan"}}
                }}
            }}
        })
    }

    #[test]
    fn an_example_follows_references_and_formats() {
        let d = doc();
        let e = example(
            &d,
            &json!({"$ref": "#/components/schemas/Plans"}),
            EXAMPLE_DEPTH,
        );
        assert_eq!(e["plans"][0]["plan_type"], "fixed");
        assert_eq!(e["plans"][0]["term_months"], 1);
        assert_eq!(e["plans"][0]["plan_uuid"].as_str().map(str::len), Some(36));
    }

    #[test]
    fn fields_say_their_type_and_whether_required() {
        let d = doc();
        let rows = fields(&d, &json!({"$ref": "#/components/schemas/Plan"}));
        let term = rows.iter().find(|r| r.0 == "term_months").unwrap();
        assert_eq!(term.1, "integer, may be null");
        assert!(!term.2);
        let id = rows.iter().find(|r| r.0 == "plan_uuid").unwrap();
        assert_eq!((id.1.as_str(), id.2), ("string (uuid)", true));
        let kinds = fields(&d, &json!({"$ref": "#/components/schemas/Plans"}));
        assert_eq!(kinds[0].1, "array of Plan");
    }
}
