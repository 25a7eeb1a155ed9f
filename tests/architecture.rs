//! The module rules docs/ARCHITECTURE.md states, checked against the source: no import cycle
//! between the files of a directory (a directory's `mod.rs` is its front and may use its
//! children, which may use it), none between top-level modules, and every top-level module uses
//! only the modules its row in ARCHITECTURE.md's table names ("may use").
//!
//! An import is any path in the code outside `#[cfg(test)]` items: `use` trees and paths in
//! expressions and types (`crate::…`, `super::…`, `self::…`, or a child module's name), resolved
//! to the longest prefix that is a module file.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module file of the library: module path → file.
fn module_files(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            match m.last().map(String::as_str) {
                Some("main") if m.len() == 1 => continue, // the binary, not the library
                Some("lib") if m.len() == 1 => m.clear(),
                Some("mod") => {
                    m.pop();
                }
                _ => {}
            }
            out.insert(m, p);
        }
    }
    out
}

/// The source with comments, string and character literals blanked (newlines kept).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // Raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            'raw: while j < b.len() {
                if b[j] == '"' && (1..=hashes).all(|k| b.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                out.push(blank(b[j]));
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime (kept as text).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Punct(char),
}

fn tokens(s: &str) -> Vec<Tok> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphabetic() || c == '_' {
            let st = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(b[st..i].iter().collect()));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push(Tok::Path);
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// The tokens without `#[cfg(test)]` items (test modules, test-only functions and imports).
fn without_test_items(t: Vec<Tok>) -> Vec<Tok> {
    let attr: Vec<Tok> = tokens("#[cfg(test)]");
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if t[i..].starts_with(&attr) {
            i += attr.len();
            // Skip to the end of the item: a `;` or a balanced `{…}` at depth 0.
            let mut depth = 0;
            while i < t.len() {
                match t[i] {
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    Tok::Punct(';') if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            continue;
        }
        out.push(t[i].clone());
        i += 1;
    }
    out
}

/// Expand a `use` tree starting at `t[*i]` into full paths.
fn use_tree(t: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        match t.get(*i) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *i += 1;
            }
            Some(Tok::Path) => *i += 1,
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match t.get(*i) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => use_tree(t, i, &path, out),
                    }
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(path);
                return;
            }
            _ => {
                // `as alias` arrives as idents: drop them.
                if let Some(p) = path.iter().position(|s| s == "as") {
                    path.truncate(p);
                }
                out.push(path);
                return;
            }
        }
    }
}

/// Every path the code names: `use` trees expanded, and `a::b::c` elsewhere.
fn paths(t: &[Tok]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i] == Tok::Ident("use".into()) {
            i += 1;
            use_tree(t, &mut i, &[], &mut out);
            continue;
        }
        if let Tok::Ident(first) = &t[i] {
            if i == 0 || t[i - 1] != Tok::Path {
                let mut p = vec![first.clone()];
                let mut j = i + 1;
                while t.get(j) == Some(&Tok::Path) {
                    match t.get(j + 1) {
                        Some(Tok::Ident(s)) => p.push(s.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                if p.len() > 1 {
                    out.push(p);
                }
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The module file a path from `from` names, if it is in the crate.
fn resolve(files: &BTreeMap<Module, PathBuf>, from: &Module, path: &[String]) -> Option<Module> {
    let (mut base, mut rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super") | Some("self") => (from.clone(), path),
        Some(first) => {
            let mut child = from.clone();
            child.push(first.to_string());
            if !files.contains_key(&child) {
                return None;
            }
            (from.clone(), path)
        }
        None => return None,
    };
    while let Some(s) = rest.first() {
        match s.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    let mut best = files.contains_key(&base).then(|| base.clone());
    let mut cur = base;
    for seg in rest {
        cur.push(seg.clone());
        if files.contains_key(&cur) {
            best = Some(cur.clone());
        } else {
            break;
        }
    }
    best.filter(|m| m != from)
}

fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = module_files(src);
    let mut edges = BTreeMap::new();
    for (m, p) in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let toks = without_test_items(tokens(&strip(&text)));
        let deps: BTreeSet<Module> = paths(&toks)
            .iter()
            .filter_map(|path| resolve(&files, m, path))
            .collect();
        edges.insert(m.clone(), deps);
    }
    edges
}

/// A cycle in `g`, as a list of nodes, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        stack.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == w).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(w.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(w, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(v, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// For the directory `dir`: the graph between its children (a file or a subdirectory each),
/// leaving out `dir`'s own mod.rs.
fn children_graph(
    edges: &BTreeMap<Module, BTreeSet<Module>>,
    dir: &Module,
) -> BTreeMap<String, BTreeSet<String>> {
    let child = |m: &Module| -> Option<String> {
        (m.len() > dir.len() && m.starts_with(dir)).then(|| m[dir.len()].clone())
    };
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in edges {
        let Some(ca) = child(a) else { continue };
        for b in bs {
            match child(b) {
                Some(cb) if cb != ca => {
                    g.entry(ca.clone()).or_default().insert(cb);
                }
                _ => {}
            }
        }
    }
    g
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_cycle_between_sibling_files_or_modules() {
    let edges = graph(&src_dir());
    let dirs: BTreeSet<Module> = edges
        .keys()
        .filter(|m| !m.is_empty())
        .map(|m| m[..m.len() - 1].to_vec())
        .collect();
    let mut cycles = Vec::new();
    for d in &dirs {
        if let Some(c) = find_cycle(&children_graph(&edges, d)) {
            let at = if d.is_empty() {
                "src".to_string()
            } else {
                format!("src/{}", d.join("/"))
            };
            cycles.push(format!("{at}: {}", c.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles (move the shared items into a leaf file both can use):\n{}",
        cycles.join("\n")
    );
}

/// ARCHITECTURE.md's module table: top-level module → the modules it may use.
fn documented_rules() -> BTreeMap<String, BTreeSet<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    let mut rules = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if cells.len() < 3 || !cells[0].starts_with('`') {
            continue;
        }
        let names = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(|s| s.trim_end_matches(".rs").trim_end_matches('/').to_string())
                .collect()
        };
        let uses: BTreeSet<String> = names(cells[cells.len() - 1]).into_iter().collect();
        for m in names(cells[0]) {
            rules.insert(m, uses.clone());
        }
    }
    rules
}

#[test]
fn top_level_modules_use_only_what_architecture_md_allows() {
    let edges = graph(&src_dir());
    let rules = documented_rules();
    let mut wrong = Vec::new();
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in &edges {
        let Some(ta) = a.first() else { continue };
        for b in bs {
            match b.first() {
                Some(tb) if tb != ta => {
                    used.entry(ta.clone()).or_default().insert(tb.clone());
                }
                _ => {}
            }
        }
    }
    let tops: BTreeSet<String> = edges.keys().filter_map(|m| m.first().cloned()).collect();
    for t in &tops {
        let Some(allowed) = rules.get(t) else {
            wrong.push(format!(
                "`{t}` has no row in docs/ARCHITECTURE.md's module table"
            ));
            continue;
        };
        for u in used.get(t).into_iter().flatten() {
            if !allowed.contains(u) {
                let files: Vec<String> = edges
                    .iter()
                    .filter(|(a, bs)| {
                        a.first() == Some(t) && bs.iter().any(|b| b.first() == Some(u))
                    })
                    .map(|(a, _)| format!("src/{}", a.join("/")))
                    .collect();
                wrong.push(format!(
                    "`{t}` uses `{u}` (in {}), not in its row",
                    files.join(", ")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        find_cycle(&used).is_none(),
        "top-level modules form a cycle: {:?}",
        find_cycle(&used)
    );
}

#[test]
fn the_parser_sees_imports_and_skips_comments_strings_and_tests() {
    let src = r##"
        use super::a::{b, c::{self, D}};
        // use crate::never;
        /* crate::nor */
        fn f() { let s = "crate::not"; let r = r#"crate::raw"#; crate::x::y(); }
        #[cfg(test)]
        mod tests { use crate::only_test; }
        #[cfg(test)]
        use crate::test_import;
        fn g<'a>(c: char) -> bool { c == '}' && child::h() }
    "##;
    let toks = without_test_items(tokens(&strip(src)));
    let got: Vec<String> = paths(&toks).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "super::a::b",
            "super::a::c::self",
            "super::a::c::D",
            "crate::x::y",
            "child::h"
        ]
    );
}

#[test]
fn architecture_md_is_short_and_its_tables_are_whole() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    assert!(
        doc.lines().count() <= 150,
        "ARCHITECTURE.md should stay a one-page map"
    );
    assert_eq!(doc.matches("```").count() % 2, 0, "an unclosed code fence");
    // A table is a run of `|` lines: a header, a `|---|` line, then rows with as many cells; a
    // blank line inside would end it and show the rest as text.
    let lines: Vec<&str> = doc.lines().collect();
    let cells = |l: &str| l.trim().trim_matches('|').split('|').count();
    let mut i = 0;
    let mut tables = 0;
    while i < lines.len() {
        if lines[i].starts_with('|') {
            let width = cells(lines[i]);
            assert!(
                lines.get(i + 1).is_some_and(|l| l.starts_with("|---")),
                "line {}: a table without its |---| line",
                i + 2
            );
            let mut j = i + 2;
            while j < lines.len() && lines[j].starts_with('|') {
                assert_eq!(
                    cells(lines[j]),
                    width,
                    "line {}: wrong number of cells",
                    j + 1
                );
                assert!(
                    lines[j].len() <= 400,
                    "line {}: a cell too long to read",
                    j + 1
                );
                j += 1;
            }
            assert!(j > i + 2, "line {}: a table without rows", i + 1);
            tables += 1;
            i = j;
        } else {
            i += 1;
        }
    }
    assert!(tables >= 1);
}

#[test]
fn a_cycle_between_files_is_found() {
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(find_cycle(&g(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        find_cycle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
