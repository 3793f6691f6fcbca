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
        &["clock", "config", "crypto", "domain", "store"],
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
    paths_after(code, "crate::")
        .into_iter()
        .map(|(_, segments)| {
            segments
                .iter()
                .take(2)
                .cloned()
                .collect::<Vec<_>>()
                .join("::")
        })
        .collect()
}

/// Every path that `needle` (`crate::` or `super::`) starts in `code`, each with where it starts
/// and its segments after the needle (`super::super::x` read from the first `super::` gives
/// `super`, `x`).
fn paths_after(code: &str, needle: &str) -> Vec<(usize, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let needle: Vec<char> = needle.chars().collect();
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        // `a::super::` is read from its start, not from its inner `super::`.
        let continued = i >= 2 && chars[i - 1] == ':' && chars[i - 2] == ':';
        if chars[i..i + needle.len()] == needle[..] && !ident_before(&chars, i) && !continued {
            let mut prefix = Vec::new();
            let mut found = Vec::new();
            paths_at(&chars, i + needle.len(), &mut prefix, &mut found);
            paths.extend(found.into_iter().map(|p| (i, p)));
            i += needle.len();
        } else {
            i += 1;
        }
    }
    paths
}

/// For each char of `code`, how many inline modules (`mod tests { .. }`) enclose it: a
/// `super::` there names the file's own module first.
fn inline_module_depths(code: &str) -> Vec<usize> {
    let chars: Vec<char> = code.chars().collect();
    let mut depths = Vec::with_capacity(chars.len());
    let (mut braces, mut modules, mut opening) = (0usize, Vec::<usize>::new(), false);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == 'm'
            && chars[i..].starts_with(&['m', 'o', 'd'])
            && !ident_before(&chars, i)
            && chars.get(i + 3).is_some_and(|c| c.is_whitespace())
        {
            // `mod name {` opens an inline module; `mod name;` names a file.
            let mut j = i + 3;
            while j < chars.len() && (chars[j].is_whitespace() || is_ident(chars[j])) {
                j += 1;
            }
            opening = chars.get(j) == Some(&'{');
        }
        if c == '{' {
            if opening {
                modules.push(braces);
                opening = false;
            }
            braces += 1;
        } else if c == '}' {
            braces = braces.saturating_sub(1);
            if modules.last() == Some(&braces) {
                modules.pop();
            }
        }
        depths.push(modules.len());
        i += 1;
    }
    depths
}

/// Reads a use tree (or an expression path) at `i`, pushing each leaf's segments. Returns where
/// it stopped.
fn paths_at(
    chars: &[char],
    mut i: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
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
            out.push(prefix.clone());
        }
        return i.max(start + usize::from(name.is_empty()));
    }
    prefix.push(name);
    if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
        return paths_at(chars, i + 2, prefix, out);
    }
    out.push(prefix.clone());
    // `a::b as c`: the new name is no path of its own.
    let after = skip_ws(i);
    if chars[after..].starts_with(&['a', 's'])
        && chars.get(after + 2).is_some_and(|c| c.is_whitespace())
    {
        let mut j = skip_ws(after + 2);
        while j < chars.len() && is_ident(chars[j]) {
            j += 1;
        }
        return j;
    }
    i
}

/// The module a file is: `src/services/credit.rs` -> `services::credit`, `src/http/mod.rs` ->
/// `http`, `src/lib.rs` -> the crate's root (no segment).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut segments: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = segments.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            segments.push(stem.to_owned());
        }
    }
    segments
}

/// Every path of the crate a file names, from the crate's root: its `crate::` paths, and its
/// `super::` paths resolved from the file's module (inside an inline module, the first
/// `super` is the file's own module). A path that stays in the file is left out.
fn resolved_paths(src: &Path, file: &Path, code: &str) -> Vec<Vec<String>> {
    let mut paths: Vec<Vec<String>> = paths_after(code, "crate::")
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let own = module_path(src, file);
    let depths = inline_module_depths(code);
    for (at, rest) in paths_after(code, "super::") {
        let supers = 1 + rest.iter().take_while(|s| *s == "super").count();
        let inline = depths.get(at).copied().unwrap_or(0);
        if supers <= inline {
            continue;
        }
        let up = supers - inline;
        if up > own.len() {
            continue;
        }
        let mut path = own[..own.len() - up].to_vec();
        path.extend(rest.into_iter().skip(supers - 1));
        paths.push(path);
    }
    paths
}

/// The areas whose own modules are checked for cycles among themselves.
const AREAS: &[&str] = &["services", "http"];

/// The node of the module graph inside an area that `path` falls in: `services::credit`,
/// `http::portal` (for `http::portal::pages`); `None` outside the areas and for the area's
/// root (`mod.rs`, which declares and assembles its modules).
fn area_node(path: &[String]) -> Option<String> {
    match path {
        [area, module, ..] if AREAS.contains(&area.as_str()) => Some(format!("{area}::{module}")),
        _ => None,
    }
}

/// The source files under `src`, sorted; none found is a broken check, not a clean crate.
fn source_files(src: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    assert!(
        files.len() > 10,
        "found {} source files under {}: the check would pass on nothing",
        files.len(),
        src.display()
    );
    for area in AREAS {
        assert!(
            files
                .iter()
                .any(|f| module_path(src, f).first().map(String::as_str) == Some(area)),
            "no source file of `{area}` under {}",
            src.display()
        );
    }
    files
}

fn violations() -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let src = src_dir();
    let files = source_files(&src);
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut bad = Vec::new();
    for file in &files {
        let from = module_of(&src, file);
        let source = std::fs::read_to_string(file).unwrap_or_default();
        for segments in resolved_paths(&src, file, &code_only(&source)) {
            let path = segments
                .iter()
                .take(2)
                .cloned()
                .collect::<Vec<_>>()
                .join("::");
            let to = segments.first().cloned().unwrap_or_default();
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

/// The module graph inside each area: which of its modules each module names (files of a
/// module in a folder, `http/portal/*.rs`, are that one module).
fn area_graph(src: &Path, files: &[PathBuf]) -> BTreeMap<String, BTreeSet<String>> {
    let nodes: BTreeSet<String> = files
        .iter()
        .filter_map(|f| area_node(&module_path(src, f)))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        nodes.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
    for file in files {
        let Some(from) = area_node(&module_path(src, file)) else {
            continue;
        };
        let source = std::fs::read_to_string(file).unwrap_or_default();
        for path in resolved_paths(src, file, &code_only(&source)) {
            if let Some(to) = area_node(&path).filter(|to| *to != from && nodes.contains(to)) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

/// The graph's cycles, one per strongly connected set of more than one module, each as its
/// modules in order round the loop.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Which modules each one reaches.
    let reach = |start: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph.get(start).into_iter().flatten().collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(graph.get(n).into_iter().flatten());
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for start in graph.keys() {
        if done.contains(start) || !reaches[start].contains(start) {
            continue;
        }
        // One loop through `start`: a shortest path back to it.
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        let mut seen = BTreeSet::from([start.clone()]);
        let mut back = None;
        while let Some(n) = queue.pop_front() {
            for next in graph.get(&n).into_iter().flatten() {
                if next == start {
                    back = Some(n.clone());
                    queue.clear();
                    break;
                }
                if seen.insert(next.clone()) {
                    parent.insert(next.clone(), n.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        let mut cycle = Vec::new();
        let mut at = back;
        while let Some(n) = at {
            at = parent.get(&n).cloned();
            cycle.push(n);
        }
        cycle.reverse();
        // Every module in the same strongly connected set is reported with this one loop.
        for n in graph.keys() {
            if reaches[start].contains(n) && reaches[n].contains(start) {
                done.insert(n.clone());
            }
        }
        found.push(cycle);
    }
    found
}

#[test]
fn no_module_imports_a_sibling_that_imports_it_back() {
    let src = src_dir();
    let files = source_files(&src);
    let graph = area_graph(&src, &files);
    for area in AREAS {
        assert!(
            graph.keys().any(|n| n.starts_with(&format!("{area}::"))),
            "no module of `{area}` found"
        );
    }
    let found: Vec<String> = cycles(&graph)
        .iter()
        .map(|c| format!("{} -> {}", c.join(" -> "), c[0]))
        .collect();
    assert!(
        found.is_empty(),
        "import cycles among the modules of {AREAS:?} (a use case that several need belongs \
         in a module below them):\n{}",
        found.join("\n")
    );
}

/// Modules every sibling may call, so that they call none: what a change sets off.
const BOTTOM: &[&str] = &["services::follow_up"];

#[test]
fn the_bottom_modules_import_no_sibling() {
    let src = src_dir();
    let files = source_files(&src);
    let graph = area_graph(&src, &files);
    for bottom in BOTTOM {
        let imports = graph
            .get(*bottom)
            .unwrap_or_else(|| panic!("no module `{bottom}` found"));
        assert!(
            imports.is_empty(),
            "`{bottom}` imports {imports:?}: what several use cases set off belongs below them all"
        );
    }
}

#[test]
fn the_reader_resolves_super_paths() {
    let src = Path::new("/src");
    let code = code_only(
        "use super::{audit::Actor, Error};\n\
         fn f() { super::super::jobs::sandbox::run(); }\n\
         #[cfg(test)] mod tests { use super::*; fn g() { super::super::status::x(); } }",
    );
    let mut paths: Vec<String> = resolved_paths(src, Path::new("/src/services/credit.rs"), &code)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "jobs::sandbox::run",
            "services::Error",
            "services::audit::Actor",
            "services::status::x"
        ]
    );
    assert_eq!(
        area_node(&module_path(src, Path::new("/src/http/portal/pages.rs"))),
        Some("http::portal".to_owned())
    );
    assert_eq!(
        area_node(&module_path(src, Path::new("/src/http/mod.rs"))),
        None
    );
}

#[test]
fn the_cycle_finder_finds_a_loop() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a"][..]),
        ("d", &["a"][..]),
    ]
    .iter()
    .map(|(n, to)| {
        (
            n.to_string(),
            to.iter().map(|t| t.to_string()).collect::<BTreeSet<_>>(),
        )
    })
    .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
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
    let files = source_files(&src);
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
        "use crate::{a::{b, c::d}, e, f::{self}, j::k as alias}; // crate::comment::x\n\
         let x = crate::g::h(\"crate::string::y\"); let c = '\"'; let z = crate::i;",
    );
    let mut paths = crate_paths(&code);
    paths.sort();
    assert_eq!(paths, ["a::b", "a::c", "e", "f", "g::h", "i", "j::k"]);
}
