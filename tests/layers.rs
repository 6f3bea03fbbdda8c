//! Layers import only downward: the order in ARCHITECTURE.md's "Layers" section, checked
//! against every `use` and every inline `crate::` / `super::` path under src/.
//!
//! - Top-level modules: each imports only modules of layers before its own (not its own
//!   layer's). The library and the binary each have their list; the binary may use any
//!   library module.
//! - Inside a module, its files import each other in one direction: no cycle among
//!   siblings. A child may use its parent (the module's shared vocabulary and facade), and
//!   a parent its children.
//!
//! Test code (`#[cfg(test)]` items and the files they declare) is not checked: tests may
//! use anything, the test kit included. A path through a module's `pub use` of one of its
//! own parts counts as an import of that part.
//!
//! This reads the source as tokens (comments, strings and characters skipped), not with a
//! full parser; it understands `use` trees, `crate::` / `super::` / `self::` paths and
//! 2018-style paths that start with a child module's name.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    PathSep,
}

/// Tokens with their line numbers: identifiers, `::` and single punctuation characters;
/// comments, string, byte-string, raw-string and character literals are dropped.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let skip_string = |mut i: usize, line: &mut usize| -> usize {
        // c[i] is the opening quote.
        i += 1;
        while i < c.len() && c[i] != '"' {
            if c[i] == '\\' {
                i += 1;
            }
            if i < c.len() && c[i] == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i + 1
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(i, &mut line);
        } else if ch == '\'' {
            // A character literal ('a', '\n', '\u{..}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if (word == "r" || word == "br") && matches!(c.get(i), Some('#') | Some('"')) {
                let mut hashes = 0;
                while c.get(i + hashes) == Some(&'#') {
                    hashes += 1;
                }
                if c.get(i + hashes) == Some(&'"') {
                    // Raw string: ends at a quote followed by as many #.
                    i += hashes + 1;
                    loop {
                        if i >= c.len() {
                            break;
                        }
                        if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                            i += 1 + hashes;
                            break;
                        }
                        if c[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                    continue;
                }
            }
            if word == "b" && c.get(i) == Some(&'"') {
                i = skip_string(i, &mut line);
                continue;
            }
            if word == "b" && c.get(i) == Some(&'\'') {
                continue; // the character literal follows
            }
            out.push((Tok::Ident(word), line));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// What one file says about modules: the paths it uses (with lines), its child modules,
/// the children that are test code, and its `pub use` re-exports (name -> path).
#[derive(Default, Debug)]
struct FileInfo {
    paths: Vec<(Vec<String>, usize)>,
    children: BTreeSet<String>,
    test_children: BTreeSet<String>,
    reexports: HashMap<String, Vec<String>>,
}

fn ident(t: &[(Tok, usize)], i: usize) -> Option<&str> {
    match t.get(i) {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

fn is_punct(t: &[(Tok, usize)], i: usize, p: char) -> bool {
    matches!(t.get(i), Some((Tok::Punct(q), _)) if *q == p)
}

/// Index just past the item starting at `i` (ends at `;` or at its top-level `{...}`).
fn skip_item(t: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match &t[i].0 {
            Tok::Punct('{') | Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') => depth -= 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Index past an attribute `#[...]` or `#![...]` starting at `i`.
fn skip_attr(t: &[(Tok, usize)], i: usize) -> usize {
    let mut j = i + 1;
    if is_punct(t, j, '!') {
        j += 1;
    }
    skip_group(t, j)
}

/// `#[cfg(test)]` exactly (test code; `cfg(any(test, feature = ..))` is real code).
fn is_cfg_test(t: &[(Tok, usize)], i: usize) -> bool {
    is_punct(t, i, '#')
        && is_punct(t, i + 1, '[')
        && ident(t, i + 2) == Some("cfg")
        && is_punct(t, i + 3, '(')
        && ident(t, i + 4) == Some("test")
        && is_punct(t, i + 5, ')')
        && is_punct(t, i + 6, ']')
}

/// A path a `use` brings in, and the name it is brought in as when renamed.
type UsePath = (Vec<String>, Option<String>);

/// Parses a use tree at `i`; pushes every full path (`self` folded into its parent).
fn use_tree(t: &[(Tok, usize)], mut i: usize, prefix: &[String], out: &mut Vec<UsePath>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match t.get(i).map(|x| &x.0) {
            Some(Tok::Ident(s)) if s == "as" => {
                out.push((path, ident(t, i + 1).map(str::to_string)));
                return i + 2;
            }
            Some(Tok::Ident(s)) => {
                if s != "self" || path.is_empty() {
                    path.push(s.clone());
                }
                i += 1;
            }
            Some(Tok::PathSep) => i += 1,
            Some(Tok::Punct('*')) => {
                out.push((path, None));
                return i + 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while !is_punct(t, i, '}') && i < t.len() {
                    i = use_tree(t, i, &path, out);
                    if is_punct(t, i, ',') {
                        i += 1;
                    }
                }
                return i + 1;
            }
            _ => {
                out.push((path, None));
                return i;
            }
        }
    }
}

/// Index past the balanced group that opens at `i` (`(`, `[` or `{`).
fn skip_group(t: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match t[i].0 {
            Tok::Punct('(') | Tok::Punct('[') | Tok::Punct('{') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

fn scan(src: &str) -> FileInfo {
    let t = tokens(src);
    let mut info = FileInfo::default();
    let mut i = 0;
    while i < t.len() {
        if is_cfg_test(&t, i) {
            let mut j = skip_attr(&t, i);
            while is_punct(&t, j, '#') {
                j = skip_attr(&t, j);
            }
            // `[pub[(..)]] mod name;` declares a test-only file.
            let mut k = j;
            if ident(&t, k) == Some("pub") {
                k += 1;
                if is_punct(&t, k, '(') {
                    k = skip_group(&t, k);
                }
            }
            if ident(&t, k) == Some("mod") && is_punct(&t, k + 2, ';') {
                info.test_children.insert(ident(&t, k + 1).unwrap().to_string());
            }
            i = skip_item(&t, j);
            continue;
        }
        if is_punct(&t, i, '#') {
            i = skip_attr(&t, i);
            continue;
        }
        match ident(&t, i) {
            Some("mod") if is_punct(&t, i + 2, ';') || is_punct(&t, i + 2, '{') => {
                info.children.insert(ident(&t, i + 1).unwrap().to_string());
                i += 2;
            }
            Some("use") => {
                let public = i > 0 && (ident(&t, i - 1) == Some("pub") || is_punct(&t, i - 1, ')'));
                let line = t[i].1;
                let mut paths = Vec::new();
                i = use_tree(&t, i + 1, &[], &mut paths);
                for (path, alias) in paths {
                    if public {
                        // Re-exported here under its last segment, or its new name.
                        if let Some(name) = alias.or_else(|| path.last().cloned()) {
                            info.reexports.insert(name, path.clone());
                        }
                    }
                    info.paths.push((path, line));
                }
            }
            Some(w @ ("crate" | "super" | "self")) if t.get(i + 1).map(|x| &x.0) == Some(&Tok::PathSep) => {
                // An inline path: crate::a::b, super::super::x, self::child::y.
                let line = t[i].1;
                let mut p = vec![w.to_string()];
                let mut j = i + 1;
                while t.get(j).map(|x| &x.0) == Some(&Tok::PathSep) {
                    match ident(&t, j + 1) {
                        Some(s) => p.push(s.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                info.paths.push((p, line));
                i = j;
            }
            _ => i += 1,
        }
    }
    info
}

/// Which crate a file belongs to and its module path in it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Module {
    bin: bool,
    path: Vec<String>,
}

impl Module {
    fn name(&self) -> String {
        let root = if self.bin { "bin" } else { "lib" };
        if self.path.is_empty() {
            root.to_string()
        } else {
            format!("{root}::{}", self.path.join("::"))
        }
    }
}

struct Tree {
    files: BTreeMap<Module, (PathBuf, FileInfo)>,
}

impl Tree {
    fn load(src: &Path) -> Tree {
        let mut files = BTreeMap::new();
        let lib_mods = scan(&std::fs::read_to_string(src.join("lib.rs")).unwrap()).children;
        let mut stack = vec![src.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") {
                    continue;
                }
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut path: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
                if matches!(path.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    path.pop();
                }
                let bin = match path.first() {
                    None => rel == Path::new("main"),
                    Some(top) => !lib_mods.contains(top),
                };
                let info = scan(&std::fs::read_to_string(&p).unwrap());
                files.insert(Module { bin, path }, (p, info));
            }
        }
        Tree { files }
    }

    fn is_module(&self, bin: bool, path: &[String]) -> bool {
        self.files.contains_key(&Module {
            bin,
            path: path.to_vec(),
        })
    }

    /// Test code: a file declared under `#[cfg(test)]`, or anything inside one.
    fn is_test(&self, m: &Module) -> bool {
        (1..=m.path.len()).any(|k| {
            let parent = Module {
                bin: m.bin,
                path: m.path[..k - 1].to_vec(),
            };
            self.files
                .get(&parent)
                .is_some_and(|(_, f)| f.test_children.contains(&m.path[k - 1]))
        })
    }

    /// The module a path used in `m` names (following re-exports), if it is in this crate.
    fn resolve(&self, m: &Module, p: &[String]) -> Option<Vec<String>> {
        let info = &self.files[m].1;
        let mut abs: Vec<String> = match p.first().map(String::as_str) {
            Some("crate") => p[1..].to_vec(),
            Some("super") | Some("self") => {
                let mut base = m.path.clone();
                let mut k = 0;
                while k < p.len() && (p[k] == "super" || p[k] == "self") {
                    if p[k] == "super" {
                        base.pop();
                    }
                    k += 1;
                }
                base.extend(p[k..].iter().cloned());
                base
            }
            Some(first) if info.children.contains(first) => {
                let mut base = m.path.clone();
                base.extend(p.iter().cloned());
                base
            }
            _ => return None,
        };
        let mut cur: Vec<String> = Vec::new();
        let mut k = 0;
        let mut hops = 0;
        while k < abs.len() {
            let mut next = cur.clone();
            next.push(abs[k].clone());
            if self.is_module(m.bin, &next) {
                cur = next;
                k += 1;
                continue;
            }
            // An item re-exported by `cur`: continue from where it comes from.
            let here = Module {
                bin: m.bin,
                path: cur.clone(),
            };
            let Some(target) = self.files.get(&here).and_then(|(_, f)| f.reexports.get(&abs[k])) else {
                break;
            };
            hops += 1;
            if hops > 8 {
                break;
            }
            let resolved = self.resolve(&here, target)?;
            // Only a facade's re-export of its own parts is seen through (`capture::LinkType`
            // is `capture::linktype`); a path through another module's re-export names
            // that module (`flow::Dir` from `tcp` is an import of `flow`).
            if resolved == cur || !resolved.starts_with(&cur) {
                break;
            }
            let mut rest = resolved.clone();
            rest.extend(abs[k + 1..].iter().cloned());
            abs = rest;
            cur = Vec::new();
            k = 0;
        }
        Some(cur)
    }
}

/// The layers of ARCHITECTURE.md: for "library" and "binary", module -> layer index.
fn layers(architecture: &str) -> BTreeMap<&'static str, BTreeMap<String, usize>> {
    let section = architecture
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a '## Layers' section")
        .split("\n## ")
        .next()
        .unwrap();
    let mut out = BTreeMap::new();
    for (key, label) in [("library", "library:"), ("binary", "binary:")] {
        let line = section
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("the Layers section has a '{label}' line"));
        let mut m = BTreeMap::new();
        for (i, group) in line.split('|').enumerate() {
            for name in group.split_whitespace() {
                assert!(m.insert(name.to_string(), i).is_none(), "{name} is listed twice");
            }
        }
        out.insert(key, m);
    }
    out
}

fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Every cycle through the smallest node of a strongly connected set, found by DFS.
    fn dfs(
        g: &BTreeMap<String, BTreeSet<String>>,
        v: &str,
        start: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        for w in g.get(v).into_iter().flatten() {
            if w == start {
                out.push(path.clone());
            } else if w.as_str() > start && !path.contains(w) && out.len() < 20 {
                path.push(w.clone());
                dfs(g, w, start, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for v in graph.keys() {
        dfs(graph, v, v, &mut vec![v.clone()], &mut out);
    }
    out
}

#[test]
fn layers_import_only_downward_and_modules_have_no_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = Tree::load(&root.join("src"));
    let layers = layers(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap());

    // Every top-level module is in exactly one layer, and nothing else is.
    for bin in [false, true] {
        let declared: BTreeSet<String> = tree
            .files
            .keys()
            .filter(|m| m.bin == bin && m.path.len() == 1)
            .map(|m| m.path[0].clone())
            .collect();
        let listed: BTreeSet<String> = layers[if bin { "binary" } else { "library" }].keys().cloned().collect();
        assert_eq!(
            declared, listed,
            "ARCHITECTURE.md's layers list the top-level modules of src/"
        );
    }

    let mut problems = Vec::new();
    // Sibling edges inside each module: parent -> (from child -> to child -> an example).
    let mut inner: BTreeMap<Module, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    let mut checked = 0;
    for (m, (file, info)) in &tree.files {
        if tree.is_test(m) || m.path.is_empty() {
            continue;
        }
        let order = &layers[if m.bin { "binary" } else { "library" }];
        for (p, line) in &info.paths {
            let Some(t) = tree.resolve(m, p) else { continue };
            checked += 1;
            let k = m.path.iter().zip(&t).take_while(|(a, b)| a == b).count();
            if k == m.path.len() || k == t.len() {
                continue; // itself, a parent or a child
            }
            let at = format!(
                "{}:{line} ({})",
                file.strip_prefix(root).unwrap().display(),
                p.join("::")
            );
            if k == 0 {
                let (from, to) = (order[&m.path[0]], order[&t[0]]);
                if to >= from {
                    problems.push(format!(
                        "{at}: {} (layer {from}) imports {} (layer {to}): only layers below may be imported",
                        m.path[0], t[0]
                    ));
                }
            } else {
                let parent = Module {
                    bin: m.bin,
                    path: m.path[..k].to_vec(),
                };
                inner
                    .entry(parent)
                    .or_default()
                    .entry(m.path[k].clone())
                    .or_default()
                    .entry(t[k].clone())
                    .or_insert(at);
            }
        }
    }
    for (parent, edges) in &inner {
        let graph: BTreeMap<String, BTreeSet<String>> = edges
            .iter()
            .map(|(a, bs)| (a.clone(), bs.keys().cloned().collect()))
            .collect();
        for cycle in cycles(&graph) {
            let steps: Vec<String> = cycle
                .iter()
                .zip(cycle.iter().cycle().skip(1))
                .map(|(a, b)| format!("  {a} -> {b}: {}", edges[a][b]))
                .collect();
            problems.push(format!("cycle inside {}:\n{}", parent.name(), steps.join("\n")));
        }
    }
    assert!(checked > 300, "only {checked} imports found: is the scanner broken?");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checker itself: it sees what it must, so the test above can fail.
#[test]
fn the_scanner_finds_uses_paths_and_test_code() {
    let src = r##"
        //! crate::doc::comment is not a path
        use super::a::{b::{C, D as E}, self};
        pub use child::Item;
        mod child;
        #[cfg(test)]
        mod tests;
        #[cfg(test)]
        mod inline { use crate::hidden::X; }
        fn f() { let s = "crate::in::string"; let r = r#"crate::raw"#; let c = '"'; crate::x::y(); super::z::w(); }
        fn g<'a>(x: &'a str) -> &'a str { self::child::h(x) }
    "##;
    let info = scan(src);
    let paths: Vec<String> = info.paths.iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "super::a::b::C",
            "super::a::b::D",
            "super::a",
            "child::Item",
            "crate::x::y",
            "super::z::w",
            "self::child::h"
        ]
    );
    assert_eq!(info.children, ["child".to_string()].into());
    assert_eq!(info.test_children, ["tests".to_string()].into());
    assert_eq!(info.reexports["Item"], ["child", "Item"]);
    // Layers: a module importing its own layer or a later one is reported.
    let l = layers("\n## Layers\nlibrary: a b | c\nbinary: x\n");
    assert_eq!((l["library"]["a"], l["library"]["b"], l["library"]["c"]), (0, 0, 1));
    let g: BTreeMap<String, BTreeSet<String>> =
        [("p".into(), ["q".into()].into()), ("q".into(), ["p".into()].into())].into();
    assert_eq!(cycles(&g), [vec!["p".to_string(), "q".to_string()]]);
}
