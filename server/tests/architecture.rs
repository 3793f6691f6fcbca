//! The layering rule of ARCHITECTURE.md, checked: every `crate::` path in `server/src` (in `use`
//! items, nested groups included, and in expressions) must point at a module its own module may
//! import. A new edge is a decision: add it to `ALLOWED` with the reason, or move the code.
//!
//! Reads the source only (no build of the server), so it runs in a moment.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

/// Each top-level module of `server/src` and the modules it may import, bottom layer first.
/// `lib`, `main`, `cli` and `admin` assemble the whole and may import anything.
const ALLOWED: &[(&str, &[&str])] = &[
    // The rules: nothing else of the crate.
    ("domain", &[]),
    // SQL and row mapping.
    ("store", &["domain"]),
    ("config", &["domain"]),
    ("crypto", &["domain"]),
    // Time; an account's clock offset is stored.
    ("clock", &["domain", "store"]),
    // Jobs scheduled in the caller's transaction, and how a job run ends.
    ("outbox", &["clock", "domain", "store"]),
    // The outside world: bureau, card processor, address directory, utility gateway.
    (
        "adapters",
        &["clock", "config", "crypto", "domain", "outbox", "store"],
    ),
    ("documents", &["domain", "store"]),
    ("mail", &["clock", "config", "domain", "outbox", "store"]),
    (
        "webhooks",
        &["clock", "config", "crypto", "domain", "outbox", "store"],
    ),
    // The core state holds the adapters, the mailer and the webhook sender.
    (
        "state",
        &[
            "adapters", "clock", "config", "crypto", "domain", "mail", "store", "webhooks",
        ],
    ),
    // The use cases.
    (
        "services",
        &[
            "adapters",
            "clock",
            "config",
            "crypto",
            "documents",
            "domain",
            "mail",
            "outbox",
            "state",
            "store",
            "webhooks",
        ],
    ),
    // The two edges: requests and background work. Neither imports the other.
    (
        "jobs",
        &[
            "adapters",
            "clock",
            "config",
            "crypto",
            "documents",
            "domain",
            "mail",
            "outbox",
            "services",
            "state",
            "store",
            "webhooks",
        ],
    ),
    (
        "http",
        &[
            "adapters",
            "clock",
            "config",
            "crypto",
            "documents",
            "domain",
            "mail",
            "outbox",
            "services",
            "state",
            "store",
            "webhooks",
        ],
    ),
];

/// Narrower exceptions: `(from, path prefix)`.
const ALSO_ALLOWED: &[(&str, &str)] = &[
    // The sandbox's advance-clock request runs the account's due jobs before it answers: the
    // queue's runner is the one thing of `jobs` a handler may call.
    ("http", "jobs::sandbox"),
];

/// Modules that assemble everything.
const TOP: &[&str] = &["lib", "main", "cli", "admin"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to: `src/http/billing.rs` -> `http`, `src/clock.rs` ->
/// `clock`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_owned()
}

/// The source with comments removed and string and char literals emptied, so that only code
/// is searched.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('#') | Some('"')) && !ident_before(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else {
                out.push(c);
                i += 1;
            }
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path that `crate::` starts in `code`, as its segments up to two deep
/// (`crate::jobs::sandbox::advance` -> `jobs::sandbox`; `crate::{a::b, c}` -> `a::b`, `c`).
fn crate_paths(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let needle: Vec<char> = "crate::".chars().collect();
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        if chars[i..i + needle.len()] == needle[..] && !ident_before(&chars, i) {
            let mut prefix = Vec::new();
            paths_at(&chars, i + needle.len(), &mut prefix, &mut paths);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    paths
}

/// Reads a use tree (or an expression path) at `i`, pushing each leaf's first two segments.
/// Returns where it stopped.
fn paths_at(
    chars: &[char],
    mut i: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<String>,
) -> usize {
    let skip_ws = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    i = skip_ws(i);
    if chars.get(i) == Some(&'{') {
        i += 1;
        loop {
            i = skip_ws(i);
            match chars.get(i) {
                None => return i,
                Some('}') => return i + 1,
                Some(',') => i += 1,
                _ => {
                    let mut inner = prefix.clone();
                    let j = paths_at(chars, i, &mut inner, out);
                    i = if j > i { j } else { i + 1 };
                }
            }
        }
    }
    let start = i;
    while i < chars.len() && is_ident(chars[i]) {
        i += 1;
    }
    let name: String = chars[start..i].iter().collect();
    if name.is_empty() || name == "self" {
        if !prefix.is_empty() {
            out.push(
                prefix
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("::"),
            );
        }
        return i.max(start + usize::from(name.is_empty()));
    }
    prefix.push(name);
    if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
        return paths_at(chars, i + 2, prefix, out);
    }
    out.push(
        prefix
            .iter()
            .take(2)
            .cloned()
            .collect::<Vec<_>>()
            .join("::"),
    );
    i
}

fn violations() -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut bad = Vec::new();
    for file in &files {
        let from = module_of(&src, file);
        let source = std::fs::read_to_string(file).unwrap_or_default();
        for path in crate_paths(&code_only(&source)) {
            let to = path.split("::").next().unwrap_or_default().to_owned();
            if to == from {
                continue;
            }
            edges.entry(from.clone()).or_default().insert(to.clone());
            if TOP.contains(&from.as_str()) {
                continue;
            }
            let ok = match allowed.get(from.as_str()) {
                Some(targets) => targets.contains(&to.as_str()),
                None => false,
            } || ALSO_ALLOWED
                .iter()
                .any(|(f, p)| *f == from && (path == *p || path.starts_with(&format!("{p}::"))));
            if !ok {
                let rel = file.strip_prefix(&src).unwrap_or(file).display();
                bad.push(format!("{rel}: `{from}` may not import `crate::{path}`"));
            }
        }
    }
    bad.sort();
    bad.dedup();
    (edges, bad)
}

#[test]
fn no_module_imports_upward() {
    let (_, bad) = violations();
    assert!(
        bad.is_empty(),
        "imports against the layering of ARCHITECTURE.md:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_module_has_its_place_in_the_layers() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let known: BTreeSet<&str> = ALLOWED
        .iter()
        .map(|(m, _)| *m)
        .chain(TOP.iter().copied())
        .collect();
    let mut missing: Vec<String> = files
        .iter()
        .map(|f| module_of(&src, f))
        .filter(|m| !known.contains(m.as_str()))
        .collect();
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "modules missing from ALLOWED: {missing:?}"
    );
}

#[test]
fn the_allowed_edges_form_no_cycle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    // Listed bottom first: each module may import only modules listed before it.
    let mut seen = BTreeSet::new();
    for (module, targets) in ALLOWED {
        for target in *targets {
            assert!(
                seen.contains(target),
                "`{module}` may import `{target}`, which is not below it"
            );
            assert!(allowed.contains_key(target));
        }
        seen.insert(*module);
    }
}

#[test]
fn the_reader_sees_paths_in_groups_and_expressions() {
    let code = code_only(
        "use crate::{a::{b, c::d}, e, f::{self}}; // crate::comment::x\n\
         let x = crate::g::h(\"crate::string::y\"); let c = '\"'; let z = crate::i;",
    );
    let mut paths = crate_paths(&code);
    paths.sort();
    assert_eq!(paths, ["a::b", "a::c", "e", "f", "g::h", "i"]);
}
