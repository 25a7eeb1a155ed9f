//! No file-level import cycle in src/ (issue 24): files that import each other, directly or
//! around a loop, can be neither understood nor changed one at a time. A file's imports are the
//! `crate::`, `super::` and `self::` paths it names outside its `#[cfg(test)] mod tests`, each
//! resolved to the deepest module file it reaches (the rules of the review's import-graph
//! script, so that both agree); a parent module declaring its children is no import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `root` by its module path (`run/mod.rs` is `run`, `lib.rs` the root).
fn modules(root: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .with_extension("");
            let mut m: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if m.last().is_some_and(|l| l == "mod") {
                m.pop();
            }
            if m == ["lib"] || m == ["main"] {
                m.clear();
            }
            out.insert(m, path);
        }
    }
    out
}

/// The code a file's imports are read from: without its unit tests and `//` comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path that starts with `crate`, `super` or `self`, as segments; a `{…}` group gives one
/// path per item (nested groups too).
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = ["crate", "super", "self"].iter().find(|w| {
            let w: Vec<char> = w.chars().collect();
            chars[i..].starts_with(&w)
                && chars[i + w.len()..].starts_with(&[':', ':'])
                && (i == 0 || !is_ident(chars[i - 1]))
        });
        if starts.is_none() {
            i += 1;
            continue;
        }
        let (end, found) = path_at(&chars, i, Vec::new());
        out.extend(found);
        i = end.max(i + 1);
    }
    out
}

/// The path (or group of paths) at `i`, after `prefix`; returns where it ends and the paths.
fn path_at(chars: &[char], mut i: usize, prefix: Vec<String>) -> (usize, Vec<Vec<String>>) {
    let mut segs = prefix;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            return group_at(chars, i + 1, segs);
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i > start {
            segs.push(chars[start..i].iter().collect());
        }
        if chars[i..].starts_with(&[':', ':']) {
            i += 2;
        } else {
            return (i, vec![segs]);
        }
    }
}

/// The items of a `{…}` group opened before `i`, each after `prefix`.
fn group_at(chars: &[char], mut i: usize, prefix: Vec<String>) -> (usize, Vec<Vec<String>>) {
    let mut out = Vec::new();
    while i < chars.len() {
        match chars[i] {
            '}' => return (i + 1, out),
            c if c == ',' || c.is_whitespace() => i += 1,
            c if is_ident(c) || c == '{' => {
                let (end, found) = path_at(chars, i, prefix.clone());
                out.extend(found);
                // `self as x`, `Name as Other`: skip to the item's end.
                i = end;
                while i < chars.len() && !matches!(chars[i], ',' | '}') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    (i, out)
}

/// The deepest module file `path`, named in `from`, reaches (None for another crate's).
fn resolve(files: &BTreeMap<Module, PathBuf>, from: &Module, path: &[String]) -> Option<Module> {
    let (mut cur, rest): (Module, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "super" | "self" => {
            let mut base = from.clone();
            let mut k = 0;
            while k < path.len() && (path[k] == "super" || path[k] == "self") {
                if path[k] == "super" {
                    base.pop();
                }
                k += 1;
            }
            (base, &path[k..])
        }
        _ => return None,
    };
    let mut best = None;
    for seg in rest {
        cur.push(seg.clone());
        if !files.contains_key(&cur) {
            break;
        }
        best = Some(cur.clone());
    }
    best
}

/// The file-level import graph of the crate at `root` (its `src/`).
fn graph(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = modules(root);
    let mut edges = BTreeMap::new();
    for (m, path) in &files {
        let text = std::fs::read_to_string(path).expect("read source");
        let deps: BTreeSet<Module> = paths(&code(&text))
            .iter()
            .filter_map(|p| resolve(&files, m, p))
            .filter(|d| d != m)
            .collect();
        edges.insert(m.clone(), deps);
    }
    edges
}

/// The cycles of the graph: its strongly connected components of two or more files (Tarjan).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a Module) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on.insert(v);
        let edges = w.edges;
        for u in edges.get(v).into_iter().flatten() {
            if !w.index.contains_key(u) {
                visit(w, u);
                let l = w.low[u].min(w.low[v]);
                w.low.insert(v, l);
            } else if w.on.contains(u) {
                let l = w.index[u].min(w.low[v]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut comp = Vec::new();
            while let Some(u) = w.stack.pop() {
                w.on.remove(u);
                comp.push(u.clone());
                if u == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                w.out.push(comp);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.out
}

/// `a/b -> [a/c]` lines for each file of each cycle, as the review's script prints them.
fn describe(edges: &BTreeMap<Module, BTreeSet<Module>>, cycles: &[Vec<Module>]) -> String {
    let name = |m: &Module| {
        if m.is_empty() {
            "lib".into()
        } else {
            m.join("/")
        }
    };
    let mut s = String::new();
    for comp in cycles {
        for m in comp {
            let to: Vec<String> = edges[m]
                .iter()
                .filter(|d| comp.contains(d))
                .map(name)
                .collect();
            s += &format!("{} -> {}\n", name(m), to.join(", "));
        }
    }
    s
}

#[test]
fn src_has_no_file_level_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&root);
    // The graph is read at all: run/phases.rs imports run/instance.rs.
    assert!(edges[&vec!["run".to_string(), "phases".to_string()]]
        .contains(&vec!["run".to_string(), "instance".to_string()]));
    let found = cycles(&edges);
    assert!(
        found.is_empty(),
        "file-level import cycles in src/ (move the shared types into a leaf module):\n{}",
        describe(&edges, &found)
    );
}

#[test]
fn the_check_finds_a_cycle_through_groups_and_super() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir(src.join("a")).expect("mkdir");
    std::fs::write(src.join("lib.rs"), "pub mod a;\n").expect("write");
    std::fs::write(src.join("a/mod.rs"), "mod b;\nmod c;\nmod d;\n").expect("write");
    // b -> c through a nested group, c -> d through a plain path, d -> b through crate::.
    std::fs::write(
        src.join("a/b.rs"),
        "use super::{c::{self, X as Y}, other};\n// use super::d; (a comment, no import)\n",
    )
    .expect("write");
    std::fs::write(src.join("a/c.rs"), "fn f() { super::d::g() }\n").expect("write");
    std::fs::write(
        src.join("a/d.rs"),
        "pub(crate) use crate::a::b::Z;\n#[cfg(test)]\nmod tests {\n    use super::super::c;\n}\n",
    )
    .expect("write");
    let edges = graph(src);
    let found = cycles(&edges);
    assert_eq!(
        describe(&edges, &found),
        "a/b -> a/c\na/c -> a/d\na/d -> a/b\n"
    );
    // Breaking one edge (d imports b no more) breaks the cycle.
    std::fs::write(src.join("a/d.rs"), "pub fn g() {}\n").expect("write");
    assert!(cycles(&graph(src)).is_empty());
}
