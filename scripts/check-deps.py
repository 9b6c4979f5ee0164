#!/usr/bin/env python3
"""Checks the dependency rules of docs/ARCHITECTURE.md ("Crates and the direction of dependency").

1. Between crates: every normal and build dependency from one workspace crate to another is
   allowed by its room's rule (RULES below). Rooms are folders, so a new crate falls under the
   rule of the folder it is created in; a crate in no room is an error.
2. Inside a crate: no import circle between its modules (module = file). Edges come from
   `use` trees, `crate::`/`super::`/`self::` paths and paths through a child module or a name
   the module imported; a name re-exported by `pub use` (or imported by `use`) is followed to
   the module that defines it, so `lib.rs` re-exports do not make every module a circle with
   the root. Test code is exempt (tests may look anywhere): items under a `#[cfg(...test...)]`
   attribute, files starting with `#![cfg(test)]`, modules named `tests`/`test`, files named
   `tests.rs` or `*_tests.rs`.

3. Optionally, a crate's declared layer order (LAYERS_MARKER below): no arrow back up.

Usage: scripts/check-deps.py [--strict] [--verbose] [--self-test]
  --strict   also count edges from a module to its own ancestors (see ANCESTOR_EDGES)
  --verbose  print every module edge found
Python 3 standard library only; runs `cargo metadata --no-deps --offline`.
"""

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------------------------
# The rules, as data. Paths are crate folders relative to the workspace root; patterns use
# fnmatch ("probe/*" is every crate directly in probe/). The first room whose pattern matches
# a crate's folder is its room, so list the specific ones (the roof) before the general ones.
# ---------------------------------------------------------------------------------------------

ROOMS = [
    # (room, folder patterns)
    ("roof", ["inspector/cli", "inspector/bench"]),
    ("capture", ["probe/*", "counters", "counters/*"]),
    ("inspector", ["inspector/*"]),
    ("viz", ["viz", "viz/*"]),
    ("examples", ["examples", "examples/*"]),
]

# What a room may depend on (normal and build dependencies), as folder patterns of the
# target crate. Dev-dependencies are not checked: tests may use anything (rule 5, and a
# dev-only test-support crate is a dev-dependency of anything).
RULES = {
    # Rule 1: probe/ and counters/ use nothing of inspector/ but the session format.
    "capture": ["probe/*", "counters", "counters/*", "inspector/session"],
    # Rule 2: session, symbols, analysis (and any new library of inspector/) use nothing outside
    # inspector/ but the Khronos registry, as a build-dependency (BUILD_ONLY below); never
    # the roof.
    "inspector": ["inspector/*", "probe/registry"],
    # Rule 3: viz uses only the inspector's libraries (today session, symbols, analysis).
    "viz": ["viz/*", "inspector/*"],
    # Rule 4: only the roof reaches into probe/ and viz/.
    "roof": ["probe/*", "counters", "counters/*", "inspector/*", "viz", "viz/*"],
    # The examples depend on nothing of the profiler (they are run as built files).
    "examples": ["examples", "examples/*"],
}

# Targets that are no room's business even when a pattern above matches them.
NEVER = {
    # The roof's crates are binaries: nothing links them.
    "*": ["inspector/cli", "inspector/bench"],
}

# Crates that may only ever be a build-dependency (generated code, no code of it linked in).
BUILD_ONLY = ["probe/registry"]

# Crates that may only ever be a dev-dependency (test support), whatever their room allows.
DEV_ONLY = ["*/testkit", "*/test-support", "*/testsupport"]

# External crates a room must not depend on (normal or build), with the reason.
EXTERNAL_FORBIDDEN = {
    "inspector": {"clap": "the CLI wraps analysis's types in its own ValueEnums (rule 2)"},
}

# Crates (package names) still allowed an import circle while the moves of issue 23 land.
# Their circles are printed as warnings; empty this set once they are gone.
ALLOW_CIRCLES: set[str] = set()

# Whether an edge from a module to one of its own ancestors (`super::X` or `crate::X` naming an
# item that lib.rs, main.rs or a mod.rs defines) counts. The parent is the room that declares
# and orchestrates its children, and the issue's own counts (viz's six-file circle, none in the
# agent) leave such edges out; `--strict` counts them.
ANCESTOR_EDGES = False

# A crate may declare its layers, lowest first, in its root file's docs, for example
#   //! Layers: table, real < capture < calls < writer, outbox < runtime
# (continued on the next `//!` lines until a blank one). Each name is a module (`ui` covers
# `ui::view`); an edge from a module to one in a higher layer is an error. Unlisted modules are
# unconstrained.
LAYERS_MARKER = re.compile(r"^\s*//!\s*Layers\b[^:]*:(.*)$")

# Target kinds whose module trees are checked (each is its own crate root).
CHECKED_TARGET_KINDS = {"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro", "bin",
                        "example", "custom-build"}


# ---------------------------------------------------------------------------------------------
# Crate rules.
# ---------------------------------------------------------------------------------------------

def matches(folder, patterns):
    return any(fnmatch.fnmatchcase(folder, p) for p in patterns)


def room_of(folder):
    for room, patterns in ROOMS:
        if matches(folder, patterns):
            return room
    return None


def load_metadata(root):
    cargo = os.environ.get("CARGO", "cargo")
    try:
        out = subprocess.run(
            [cargo, "metadata", "--format-version", "1", "--no-deps", "--offline"],
            cwd=root, capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"check-deps: cannot run {cargo}: {e}")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
        sys.exit(f"check-deps: {cargo} metadata failed: {last}")
    return json.loads(out.stdout)


def crate_errors(meta):
    """One line per violation of the crate rules."""
    root = meta["workspace_root"]
    members = set(meta["workspace_members"])
    folders = {}  # package name -> folder relative to the workspace root
    packages = [p for p in meta["packages"] if p["id"] in members]
    for p in packages:
        folders[p["name"]] = os.path.relpath(os.path.dirname(p["manifest_path"]), root)
    errors = []
    for p in sorted(packages, key=lambda p: p["name"]):
        name, folder = p["name"], folders[p["name"]]
        room = room_of(folder)
        if room is None:
            errors.append(f"crate {name} ({folder}/) is in no room of scripts/check-deps.py: "
                          "add its folder to ROOMS and say what it may use in RULES")
            continue
        for d in p["dependencies"]:
            kind = d.get("kind") or "normal"
            if kind == "dev":
                continue
            target = d["name"]
            if target not in folders:
                why = EXTERNAL_FORBIDDEN.get(room, {}).get(target)
                if why:
                    errors.append(f"{name} ({room}) -> {target} [{kind}]: forbidden: {why}")
                continue
            tfolder = folders[target]
            where = f"{name} ({folder}/, room {room}) -> {target} ({tfolder}/) [{kind}]"
            if matches(tfolder, DEV_ONLY):
                errors.append(f"{where}: {target} is test support, only a dev-dependency")
            elif matches(tfolder, BUILD_ONLY) and kind != "build":
                errors.append(f"{where}: {target} may only be a build-dependency")
            elif matches(tfolder, NEVER.get("*", []) + NEVER.get(room, [])):
                errors.append(f"{where}: nothing depends on {target}")
            elif not matches(tfolder, RULES.get(room, [])):
                errors.append(f"{where}: room {room} may use only "
                              + ", ".join(RULES.get(room, [])) + " (docs/ARCHITECTURE.md)")
    return errors, len(packages)


# ---------------------------------------------------------------------------------------------
# Rust source: a small lexer, enough to find `mod`, `use`, paths and attributes.
# ---------------------------------------------------------------------------------------------

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(src):
    """(text, line) tokens of Rust source without comments, strings and literals."""
    out = []
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += src[i] == "\n"
                    i += 1
        elif c in "rb" and re.match(r"(br|r)#*\"", src[i:i + 40]):
            m = re.match(r"(br|rb|r)(#*)\"", src[i:])
            end = src.find('"' + m.group(2), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(2))
            line += src.count("\n", i, end)
            out.append(('""', line))
            i = end
        elif c == '"' or (c == "b" and src.startswith('b"', i)) \
                or (c == "c" and src.startswith('c"', i)):
            i += 1 if c == '"' else 2
            while i < n and src[i] != '"':
                if src[i] == "\\":
                    i += 1
                line += i < n and src[i] == "\n"
                i += 1
            out.append(('""', line))
            i += 1
        elif c == "'" or (c == "b" and src.startswith("b'", i)):
            j = i + (1 if c == "'" else 2)
            if j < n and src[j] == "\\":
                k = src.find("'", j + 2)
                i = n if k < 0 else k + 1
                out.append(("''", line))
            elif j + 1 < n and src[j + 1] == "'":
                i = j + 2
                out.append(("''", line))
            else:  # a lifetime or a label
                m = IDENT.match(src, j)
                i = m.end() if m else j
                out.append(("'lt", line))
        elif c == "r" and src.startswith("r#", i) and IDENT.match(src, i + 2):
            m = IDENT.match(src, i + 2)
            out.append((m.group(0), line))
            i = m.end()
        elif c.isalpha() or c == "_":
            m = IDENT.match(src, i)
            out.append((m.group(0), line))
            i = m.end()
        elif c.isdigit():
            m = re.match(r"[0-9][0-9A-Za-z_]*(\.[0-9][0-9A-Za-z_]*)?", src[i:])
            out.append(("0", line))
            i += len(m.group(0))
        elif src.startswith("::", i):
            out.append(("::", line))
            i += 2
        elif c == "$" and src.startswith("$crate", i):
            out.append(("crate", line))
            i += 6
        else:
            out.append((c, line))
            i += 1
    return out


OPEN, CLOSE = "([{", ")]}"


def skip_group(toks, i):
    """Index after the bracketed group starting at toks[i]."""
    depth = 0
    while i < len(toks):
        t = toks[i][0]
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def skip_item(toks, i):
    """Index after the item (or statement, or expression-level item) starting at toks[i]."""
    depth = 0
    while i < len(toks):
        t = toks[i][0]
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0 and t == "}":
                return i + 1
            if depth < 0:  # the end of the enclosing block: an attributed last expression
                return i
        elif t in ";," and depth == 0:
            return i + 1
        i += 1
    return i


def attr_is_test(toks, i, j):
    """Whether the attribute toks[i:j] (`#[...]`) is a cfg that holds only in tests."""
    words = [t for t, _ in toks[i:j]]
    if "cfg" not in words[:4] or "test" not in words:
        return False
    return "not" not in words


class Module:
    def __init__(self, path, file):
        self.path = path          # tuple of names from the crate root
        self.file = file
        self.children = {}        # name -> path tuple
        self.defs = set()         # names of items defined here
        self.bindings = {}        # name -> absolute path tuple (use, use .. as)
        self.globs = []           # absolute module path tuples of `use x::*`
        self.refs = []            # (absolute path tuple, line) referenced from here
        self.test = False


def parse_use_tree(toks, i, prefix, out):
    """Parses a use tree at toks[i]; appends (path tuple, alias or None, is_glob). Returns the
    index after it."""
    path = list(prefix)
    while i < len(toks):
        t = toks[i][0]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i][0] != "}":
                i = parse_use_tree(toks, i, path, out)
                if i < len(toks) and toks[i][0] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((tuple(path), None, True))
            return i + 1
        if t == "::":
            i += 1
            continue
        if IDENT.fullmatch(t):
            path.append(t)
            i += 1
            if i < len(toks) and toks[i][0] == "as":
                out.append((tuple(path), toks[i + 1][0], False))
                return i + 2
            if i < len(toks) and toks[i][0] == "::":
                continue
            out.append((tuple(path), None, False))
            return i
        return i + 1
    return i


TEST_MODULES = ("tests", "test")
ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}


def scan_file(mod, toks, declare_child, macros):
    """Fills `mod` from its file's tokens. `declare_child(name, inline_stack)` registers a
    `mod NAME;`. Inline modules are part of the file: their relative paths are resolved from
    the inline module (`inline` below) and attributed to the file."""
    inline = []        # names of the inline modules we are in
    inline_close = []  # brace depth at which each closes
    depth = 0
    i, n = 0, len(toks)
    # Inner attributes first: `#![cfg(test)]` makes the whole file test code.
    while i + 2 < n and [t for t, _ in toks[i:i + 3]] == ["#", "!", "["]:
        j = skip_group(toks, i + 2)
        if attr_is_test(toks, i, j):
            mod.test = True
            return
        i = j
    while i < n:
        t, line = toks[i]
        if t == "#" and i + 1 < n and toks[i + 1][0] in ("[", "!"):
            k = i + 1 if toks[i + 1][0] == "[" else i + 2
            j = skip_group(toks, k)
            if toks[i + 1][0] == "[" and attr_is_test(toks, i, j):
                i = j
                while i + 1 < n and toks[i][0] == "#":  # further attributes of the same item
                    i = skip_group(toks, i + 1)
                i = skip_item(toks, i)
                continue
            i = j
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if inline_close and depth == inline_close[-1]:
                inline.pop()
                inline_close.pop()
        here = mod.path + tuple(inline)
        if t == "mod" and i + 2 < n and IDENT.fullmatch(toks[i + 1][0]):
            name, nxt = toks[i + 1][0], toks[i + 2][0]
            if nxt == ";":
                declare_child(name, tuple(inline))
                i += 3
                continue
            if nxt == "{":
                if name in TEST_MODULES:
                    i = skip_group(toks, i + 2)
                    continue
                inline.append(name)
                inline_close.append(depth)
                depth += 1
                i += 3
                continue
        if t in ITEM_KEYWORDS and i + 1 < n and IDENT.fullmatch(toks[i + 1][0]) and not inline:
            mod.defs.add(toks[i + 1][0])
        if t == "macro_rules" and i + 2 < n and toks[i + 1][0] == "!":
            mod.defs.add(toks[i + 2][0])
            macros.setdefault(toks[i + 2][0], mod.path)
        if t == "use":
            trees = []
            j = parse_use_tree(toks, i + 1, (), trees)
            for path, alias, glob in trees:
                absolute = resolve_start(here, path)
                if absolute is None:
                    continue
                mod.refs.append((absolute, line))
                if inline:
                    continue
                if glob:
                    mod.globs.append(absolute)
                elif path[-1] != "self":
                    mod.bindings[alias or path[-1]] = absolute
                elif len(path) > 1:
                    mod.bindings[alias or path[-2]] = absolute[:-1]
            i = j
            continue
        # `pub(in crate::x)` names a visibility, not a dependency.
        if t == "in" and i > 1 and toks[i - 1][0] == "(" and toks[i - 2][0] == "pub":
            i = skip_group(toks, i - 1)
            continue
        if IDENT.fullmatch(t) and i + 1 < n and toks[i + 1][0] == "::" and \
                (i == 0 or toks[i - 1][0] != "::"):
            path = [t]
            j = i + 1
            while j + 1 < n and toks[j][0] == "::" and IDENT.fullmatch(toks[j + 1][0]):
                path.append(toks[j + 1][0])
                j += 2
            absolute = resolve_start(here, tuple(path))
            if absolute is not None:
                mod.refs.append((absolute, line))
            i = j
            continue
        i += 1


REL = "?rel"


def resolve_start(here, path):
    """A path written in module `here`: absolute (a tuple of names from the crate root) for
    `crate::`, `self::`, `super::`; else (REL, *here, None, *path), resolved once every module
    is known (a child module or a name imported here; otherwise an external crate)."""
    if not path:
        return None
    head = path[0]
    if head == "crate":
        return path[1:]
    if head == "self":
        return here + path[1:]
    if head == "super":
        base = list(here)
        k = 0
        while k < len(path) and path[k] == "super":
            if base:
                base.pop()
            k += 1
        return tuple(base) + path[k:]
    return (REL,) + here + (None,) + path


class Crate:
    def __init__(self, name):
        self.name = name
        self.modules = {}   # path tuple -> Module (file modules only)
        self.prefixes = set()
        self.macros = {}    # macro_rules name -> defining module (exported at the root)

    def finish(self):
        for path in self.modules:
            for k in range(len(path) + 1):
                self.prefixes.add(path[:k])

    def node(self, path):
        """The file module that holds module path `path` (its longest file-module prefix)."""
        path = tuple(path)
        while path not in self.modules and path:
            path = path[:-1]
        return path

    def absolutize(self, path, seen):
        """An absolute path for `path`, or None when it leaves the crate."""
        if not path or path[0] != REL:
            return path
        k = path.index(None)
        here, rel = path[1:k], path[k + 1:]
        if not rel:
            return here
        head = rel[0]
        if head in ("crate", "self", "super"):
            return self.absolutize(resolve_start(here, rel), seen)
        if here + (head,) in self.prefixes:
            return here + rel
        m = self.modules.get(here)
        if m is not None and head in m.bindings and (here, head) not in seen:
            seen.add((here, head))
            b = self.absolutize(m.bindings[head], seen)
            return None if b is None else b + rel[1:]
        return None

    def resolve(self, path, seen=None):
        """The file module a path refers to (None: outside the crate), following `use`
        bindings and re-exports to the module that defines the item."""
        seen = set() if seen is None else seen
        p = self.absolutize(path, seen)
        if p is None:
            return None
        cur = ()
        for k, seg in enumerate(p):
            if seg == "self":
                continue
            if cur + (seg,) in self.prefixes:
                cur += (seg,)
                continue
            m = self.modules.get(cur)
            if m is None:
                return self.node(cur)
            if seg in m.defs:
                return cur
            if cur == () and seg in self.macros:
                return self.macros[seg]
            if seg in m.bindings and (cur, seg) not in seen:
                seen.add((cur, seg))
                b = self.absolutize(m.bindings[seg], seen)
                if b is None:
                    return cur
                t = self.resolve(b + p[k + 1:], seen)
                return cur if t is None else t
            for g in m.globs:
                ga = self.absolutize(g, seen)
                gm = self.modules.get(ga) if ga is not None else None
                if gm is not None and (seg in gm.defs or seg in gm.bindings
                                       or ga + (seg,) in self.prefixes) \
                        and (ga, seg) not in seen:
                    seen.add((ga, seg))
                    return self.resolve(ga + p[k:], seen)
            return cur
        return cur

    def edges(self, ancestors=True):
        """{(from, to): [line, ...]} between file modules, test modules left out; without
        edges from a module to its own ancestors unless `ancestors`."""
        out = {}
        for path, m in self.modules.items():
            if m.test:
                continue
            for ref, line in m.refs:
                target = self.resolve(ref)
                if target is None:
                    continue
                target = self.node(target)
                if target == path or self.modules[target].test:
                    continue
                if not ancestors and path[:len(target)] == target:
                    continue
                out.setdefault((path, target), []).append(line)
        return out


def is_test_file(path):
    base = os.path.basename(path)
    return base == "tests.rs" or base.endswith("_tests.rs")


def load_crate(name, root_file):
    """Reads the module tree of one crate root; returns a Crate."""
    crate = Crate(name)

    def visit(path, file, is_dir_owner):
        mod = Module(path, file)
        crate.modules[path] = mod
        if is_test_file(file) or (path and path[-1] in TEST_MODULES):
            mod.test = True
            return
        try:
            with open(file, encoding="utf-8") as f:
                toks = tokens(f.read())
        except (OSError, UnicodeDecodeError):
            return
        base = os.path.dirname(file)
        children_dir = base if is_dir_owner else os.path.join(
            base, os.path.splitext(os.path.basename(file))[0])
        pending = []

        def declare(child, inline):
            d = os.path.join(children_dir, *inline)
            cands = [os.path.join(d, child + ".rs"), os.path.join(d, child, "mod.rs")]
            found = next((c for c in cands if os.path.isfile(c)), None)
            if found is not None:  # else a #[path] we do not follow, or a missing file
                pending.append((path + inline + (child,), found))

        scan_file(mod, toks, declare, crate.macros)
        if mod.test:
            return
        for cpath, found in pending:
            visit(cpath, found, os.path.basename(found) == "mod.rs")

    visit((), root_file, True)
    crate.finish()
    return crate


# ---------------------------------------------------------------------------------------------
# Strongly connected components (Tarjan, iterative).
# ---------------------------------------------------------------------------------------------

def sccs(nodes, edges):
    """Strongly connected components of size > 1, each sorted, in a stable order."""
    succ = {v: [] for v in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    for v in succ:
        succ[v].sort()
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            if k < len(succ[v]):
                work.append((v, k + 1))
                w = succ[v][k]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return sorted(out)


def module_name(path):
    return "crate" if not path else "::".join(path)


def read_layers(root_file):
    """The layers a crate root declares (lists of module paths, lowest first), or []."""
    try:
        with open(root_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    text = None
    for line in lines:
        if text is None:
            m = LAYERS_MARKER.match(line)
            if m:
                text = m.group(1)
            continue
        stripped = line.strip()
        if not stripped.startswith("//!") or not stripped[3:].strip():
            break
        text += " " + stripped[3:]
    if text is None:
        return []
    return [[tuple(w.split("::")) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_:]*", layer)]
            for layer in text.split("<")]


def layer_errors(crate, layers, root_dir):
    """One line per edge from a module to a module of a higher declared layer."""
    def layer_of(path):
        best, level = None, None
        for k, layer in enumerate(layers):
            for name in layer:
                if path[:len(name)] == name and (best is None or len(name) > len(best)):
                    best, level = name, k
        return level
    out = []
    for (a, b), lines in sorted(crate.edges(ancestors=False).items()):
        la, lb = layer_of(a), layer_of(b)
        if la is not None and lb is not None and lb > la:
            file = os.path.relpath(crate.modules[a].file, root_dir)
            out.append(f"{crate.name}: {module_name(a)} (layer {la + 1}) uses {module_name(b)} "
                       f"(layer {lb + 1}), an arrow back up ({file}:{min(lines)})")
    return out


def circle_reports(crate, root_dir, ancestors=True):
    edges = crate.edges(ancestors)
    nodes = [p for p, m in crate.modules.items() if not m.test and m.path == p]
    out = []
    for comp in sccs(nodes, edges.keys()):
        members = set(comp)
        inner = sorted((a, b) for a, b in edges if a in members and b in members)
        parts = []
        for a, b in inner:
            file = os.path.relpath(crate.modules[a].file, root_dir)
            lines = sorted(set(edges[(a, b)]))
            parts.append(f"{module_name(a)} -> {module_name(b)} ({file}:"
                         + ",".join(map(str, lines[:3])) + ("…" if len(lines) > 3 else "") + ")")
        out.append((comp, parts))
    return out


def check_circles(meta, verbose, ancestors):
    root = meta["workspace_root"]
    members = set(meta["workspace_members"])
    errors, warnings, crates = [], [], 0
    for p in sorted((p for p in meta["packages"] if p["id"] in members), key=lambda p: p["name"]):
        for t in sorted(p["targets"], key=lambda t: t["name"]):
            kinds = set(t["kind"])
            if not kinds & CHECKED_TARGET_KINDS:
                continue
            crates += 1
            label = p["name"] if kinds & {"lib", "rlib", "dylib", "cdylib", "staticlib",
                                          "proc-macro"} else f"{p['name']} ({'/'.join(sorted(kinds))} {t['name']})"
            crate = load_crate(label, t["src_path"])
            errors.extend(layer_errors(crate, read_layers(t["src_path"]), root))
            for comp, parts in circle_reports(crate, root, ancestors):
                msg = (f"{label}: import circle of {len(comp)} modules ("
                       + ", ".join(module_name(c) for c in comp) + "): " + "; ".join(parts))
                (warnings if p["name"] in ALLOW_CIRCLES else errors).append(msg)
            if verbose:
                for (a, b), lines in sorted(crate.edges(ancestors).items()):
                    print(f"  {label}: {module_name(a)} -> {module_name(b)}  lines {lines[:5]}")
    return errors, warnings, crates


# ---------------------------------------------------------------------------------------------
# Self-test.
# ---------------------------------------------------------------------------------------------

def self_test():
    ok = True

    def check(what, got, want):
        nonlocal ok
        if got != want:
            ok = False
            print(f"self-test FAILED: {what}: got {got!r}, want {want!r}")

    check("scc of a chain", sccs("abc", [("a", "b"), ("b", "c")]), [])
    check("scc of a triangle", sccs("abcd", [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]),
          [["a", "b", "c"]])
    check("two sccs", sccs("abcde", [("a", "b"), ("b", "a"), ("c", "d"), ("d", "e"), ("e", "c"),
                                     ("b", "c")]), [["a", "b"], ["c", "d", "e"]])
    check("lexer skips strings, comments, chars",
          [t for t, _ in tokens('/* use crate::a; */ let s = "crate::b"; // crate::c\n'
                                "let c = '\"'; let l: &'a str; r#\"x\"#; crate::d")],
          ["let", "s", "=", '""', ";", "let", "c", "=", "''", ";", "let", "l", ":", "&",
           "'lt", "str", ";", '""', ";", "crate", "::", "d"])
    check("room of a new probe crate", room_of("probe/procmaps"), "capture")
    check("room of a new inspector crate", room_of("inspector/testkit"), "inspector")
    check("room of the cli", room_of("inspector/cli"), "roof")
    check("no room", room_of("tools/x"), None)

    def package(name, folder, deps):
        return {"id": name, "name": name, "manifest_path": f"/w/{folder}/Cargo.toml",
                "dependencies": [{"name": n, "kind": k} for n, k in deps]}
    meta = {"workspace_root": "/w", "workspace_members": [], "packages": [
        package("session", "inspector/session", []),
        package("registry", "probe/registry", []),
        package("procmaps", "probe/procmaps", []),
        package("testkit", "inspector/testkit", [("session", None)]),
        package("agent", "probe/agent", [("session", None), ("procmaps", None),
                                         ("registry", "build"), ("testkit", "dev")]),
        package("analysis", "inspector/analysis", [("session", None), ("registry", "build"),
                                                   ("testkit", "dev"), ("clap", None)]),
        package("viz", "viz", [("analysis", None), ("agent", None), ("testkit", None)]),
        package("cli", "inspector/cli", [("viz", None), ("registry", None)]),
        package("stray", "tools/stray", []),
    ]}
    meta["workspace_members"] = [p["id"] for p in meta["packages"]]
    errs = [e.split(":")[0] for e in crate_errors(meta)[0]]
    check("crate rule violations", errs, [
        "analysis (inspector) -> clap [normal]",
        "cli (inspector/cli/, room roof) -> registry (probe/registry/) [normal]",
        "crate stray (tools/stray/) is in no room of scripts/check-deps.py",
        "viz (viz/, room viz) -> agent (probe/agent/) [normal]",
        "viz (viz/, room viz) -> testkit (inspector/testkit/) [normal]"])

    files = {
        "lib.rs": "mod a; mod b; mod c; mod d; pub use a::Thing; pub use d::*;\n"
                  "#[cfg(test)] mod tests;",
        # a uses b, b uses c through the root's re-export of a's item: no circle with lib.rs.
        "a.rs": "use crate::b::B; pub struct Thing;\n#[cfg(test)]\nmod t { use crate::c::X; }",
        "b.rs": "pub struct B; fn f() { crate::c::g(); super::Thing; }",
        # c closes the circle a -> b -> c -> a, but only through an item re-exported at the root.
        "c.rs": "pub fn g() {} use crate::Thing;",
        # d's item reached through the root's glob re-export; d/e.rs uses its parent (super).
        "d/mod.rs": "mod e; pub struct DThing; use self::e::E;",
        "d/e.rs": "pub struct E; use super::DThing; use crate::DThing as Again;",
        "tests.rs": "use crate::a::*; use crate::c::*;",
        "x_tests.rs": "",
    }
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        crate = load_crate("t", os.path.join(d, "lib.rs"))
        edges = sorted((module_name(a), module_name(b)) for a, b in crate.edges())
        check("edges", edges, [("a", "b"), ("b", "a"), ("b", "c"), ("c", "a"),
                               ("crate", "a"), ("crate", "d"), ("d", "d::e"), ("d::e", "d")])
        comps = [[module_name(p) for p in c] for c in
                 sccs(list(crate.modules), crate.edges().keys())]
        check("circles", comps, [["a", "b", "c"], ["d", "d::e"]])
        comps = [[module_name(p) for p in c] for c in
                 sccs(list(crate.modules), crate.edges(ancestors=False).keys())]
        check("circles without edges up to an ancestor", comps, [["a", "b", "c"]])
        with open(os.path.join(d, "lib.rs"), "a") as f:
            f.write("\n//! Layers: c < a, b\n//! < d\n//!\n")
        layers = read_layers(os.path.join(d, "lib.rs"))
        check("layers", layers, [[("c",)], [("a",), ("b",)], [("d",)]])
        check("arrows back up", [e.split(",")[0] for e in layer_errors(crate, layers, d)],
              ["t: c (layer 1) uses a (layer 2)"])
    print("self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        sys.exit(self_test())
    verbose = "--verbose" in args
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    meta = load_metadata(root)
    crate_errs, packages = crate_errors(meta)
    ancestors = ANCESTOR_EDGES or "--strict" in args
    circle_errs, circle_warns, crates = check_circles(meta, verbose, ancestors)
    for w in circle_warns:
        print("check-deps: allowed (ALLOW_CIRCLES): " + w)
    for e in crate_errs + circle_errs:
        print("check-deps: error: " + e)
    if crate_errs or circle_errs:
        print(f"check-deps: {len(crate_errs)} crate rule violation(s), {len(circle_errs)} "
              "import circle(s)")
        sys.exit(1)
    print(f"check-deps: ok: {packages} crates keep the rules of docs/ARCHITECTURE.md; "
          f"no import circle in {crates} crate roots"
          + (f" ({len(circle_warns)} allowed for now in {', '.join(sorted(ALLOW_CIRCLES))})"
             if circle_warns else ""))


if __name__ == "__main__":
    main()
