//! The crate's modules stay in layers (the list in `src/lib.rs`): every `crate::` and `super::`
//! path of a file, and every use of a module it declares, names a module of an earlier layer.
//! So the import graph has no circle and nothing points back up (a panel never calls into the
//! app). A new file must be given its layer here.

use std::collections::BTreeSet;
use std::path::Path;

/// The layers, first to last; a module may use only the modules of earlier layers.
const LAYERS: &[&[&str]] = &[
    &["error", "options", "camera", "metric"],
    &["gpu"],
    &["heat_pass", "mesh_pass", "surface_pass"],
    &["load", "live"],
    &["diff", "targets"],
    &["state"],
    &["ui::context"],
    &[
        "ui::draws",
        "ui::inspector",
        "ui::live",
        "ui::strip",
        "ui::toolbar",
        "ui::view",
    ],
    &["ui::diff"],
    &["ui"],
    &["app"],
    &["shot"],
    &["measure", "window"],
];

/// Every `.rs` file under `dir` as (module path, source); `lib.rs` is `crate`, `ui/mod.rs` is
/// `ui`.
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            let mut p = prefix.to_vec();
            p.push(name);
            modules(&path, &p, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut p = prefix.to_vec();
            if !matches!(name.as_str(), "mod" | "lib") {
                p.push(name);
            }
            let module = if p.is_empty() {
                "crate".to_string()
            } else {
                p.join("::")
            };
            out.push((module, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths of the use tree at the start of `s` (`a::b::C`, `a::{b, c::{D, E}}`, or an
/// inline path), each as its segments, and how many bytes it took.
fn tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut segments = Vec::new();
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip(&mut i);
        if i < b.len() && b[i] == b'{' {
            i += 1;
            let mut out = Vec::new();
            loop {
                skip(&mut i);
                if i >= b.len() || b[i] == b'}' {
                    return (out, i + 1);
                }
                let (inner, n) = tree(&s[i..]);
                i += n.max(1);
                for p in inner {
                    out.push(segments.iter().cloned().chain(p).collect());
                }
                skip(&mut i);
                if i < b.len() && b[i] == b',' {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if start == i {
            break;
        }
        segments.push(s[start..i].to_string());
        if s[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    // Past a trailing `as NAME`, so that a group's next item starts at its comma.
    while i < b.len() && !matches!(b[i], b',' | b'}' | b';') {
        i += 1;
    }
    (vec![segments], i)
}

/// The longest module of `known` that `path` starts with; `crate` when none.
fn resolve(path: &[String], known: &BTreeSet<String>) -> String {
    (1..=path.len())
        .rev()
        .map(|k| path[..k].join("::"))
        .find(|m| known.contains(m))
        .unwrap_or_else(|| "crate".into())
}

/// Positions in `code` where the word `word` starts (not inside another identifier or path).
fn word_at(code: &str, word: &str) -> Vec<usize> {
    code.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| {
            i == 0 || !(is_ident(code.as_bytes()[i - 1]) || code.as_bytes()[i - 1] == b':')
        })
        .collect()
}

/// The modules `module`'s source uses.
fn uses(module: &str, source: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = source
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let here: Vec<String> = if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    // `super::` inside an inline module (the tests) is this file's own module.
    let inline = code
        .lines()
        .scan(0, |at, l| {
            let start = *at;
            *at += l.len() + 1;
            Some((start, l.trim_start()))
        })
        .find(|(_, l)| l.starts_with("mod ") && l.trim_end().ends_with('{'))
        .map_or(code.len(), |(at, _)| at);
    let mut out = BTreeSet::new();
    for (word, base) in [("crate::", None), ("super::", Some(()))] {
        for at in word_at(&code, word) {
            let base: Vec<String> = match base {
                None => Vec::new(),
                Some(()) if at > inline => here.clone(),
                Some(()) => here[..here.len().saturating_sub(1)].to_vec(),
            };
            for path in tree(&code[at + word.len()..]).0 {
                let full: Vec<String> = base.iter().cloned().chain(path).collect();
                out.insert(resolve(&full, known));
            }
        }
    }
    // Its own submodules, used by name (`ui/mod.rs` calls `diff::table`).
    for line in code.lines() {
        let line = line.trim();
        let decl = line.strip_prefix("pub ").unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let child = here
                .iter()
                .cloned()
                .chain([name.trim().to_string()])
                .collect::<Vec<_>>()
                .join("::");
            if !word_at(&code, &format!("{}::", name.trim())).is_empty() {
                out.insert(child);
            }
        }
    }
    out.remove(module);
    out
}

#[test]
fn every_module_uses_only_earlier_layers() {
    let mut files = Vec::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut files,
    );
    let known: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let layer = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let mut wrong = Vec::new();
    for (module, source) in &files {
        if module == "crate" {
            // The root declares and re-exports the modules; nothing below may use it.
            continue;
        }
        let Some(mine) = layer(module) else {
            wrong.push(format!("{module}: in no layer (add it to LAYERS)"));
            continue;
        };
        for used in uses(module, source, &known) {
            match layer(&used) {
                Some(l) if l < mine => {}
                _ => wrong.push(format!("{module} uses {used}")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_parser_reads_use_trees_and_inline_paths() {
    let known: BTreeSet<String> = ["app", "ui", "ui::diff", "ui::view", "diff", "state"]
        .into_iter()
        .map(String::from)
        .collect();
    let src = "use crate::{diff::{A, B as C}, state};\nuse super::view::f;\n\
               fn g() { crate::app::h(); }\n// crate::ui::x in a comment\n\
               mod tests {\n    use super::*;\n}\n";
    let got = uses("ui::diff", src, &known);
    let want: BTreeSet<String> = ["app", "diff", "state", "ui::view"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(got, want);
}
