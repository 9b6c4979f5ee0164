//! Call-site addresses of a captured process to source locations.
//!
//! A session records, for every GL call, the return address of the program's call into the
//! agent's wrapper, and the module map of the process when the capture started. This crate
//! turns such an address back into `file:line function`, with the chain of inlined frames,
//! from the DWARF of the module or of its separate debug file, the way `addr2line` and gdb
//! do. It does that one thing; printing and ranking are the callers' business.
//!
//! ```no_run
//! # let session = gpuheat_session::Session::open("app.gpuheat").unwrap();
//! let mut symbols = gpuheat_symbols::Symbolizer::new(session.modules.as_ref().unwrap());
//! for call in &session.frames[0].calls {
//!     println!("{}", symbols.resolve(call.callsite));
//! }
//! ```
//!
//! # From a process address to a DWARF address
//!
//! The module mapping containing the address gives its file offset
//! (`address - start + file_offset`), and the module file's `PT_LOAD` program headers turn
//! the file offset into the ELF virtual address DWARF speaks in
//! (`p_vaddr + file offset - p_offset`). The module file is read again when symbolizing, so
//! it must still be the file that was mapped (see *Limits*).
//!
//! [`Symbolizer::resolve`] takes a **return address**, as [`gpuheat_session::Call::callsite`]
//! is: it points at the instruction after the call, which may already belong to the next
//! source line (or, after a call that never returns, to the next function), so the lookup is
//! made at `address - 1`, inside the call instruction. [`Symbolizer::resolve_pc`] looks up an
//! exact instruction address instead.
//!
//! # Where debug information is looked for
//!
//! In this order, the first that has a non-empty `.debug_info` wins:
//!
//! 1. the module file itself;
//! 2. by build-id (the `NT_GNU_BUILD_ID` note of the module), for each debug directory
//!    (default `/usr/lib/debug`): `<dir>/.build-id/ab/cdef….debug`; the file's own build-id
//!    must match;
//! 3. by `.gnu_debuglink` name, as gdb does: `<module dir>/<name>`,
//!    `<module dir>/.debug/<name>`, then `<dir>/<module dir>/<name>` for each debug directory;
//!    the file's CRC-32 must equal the one in the link (and its build-id, when both have one,
//!    the module's).
//!
//! Without DWARF, the ELF symbol table (`.symtab`, else `.dynsym`, of the module or of its
//! debug file) still names the function ([`Location::symbol`]).
//!
//! # Never an error, never a panic
//!
//! Resolving always gives a [`Location`]: at least the module and the offset in it. A module
//! file that is missing, unreadable, truncated, not ELF, or whose DWARF is damaged gives
//! `module+0xoffset`; why is available from [`Symbolizer::debug_info`]. Files are read into
//! memory rather than mapped, so a file truncated while it is read cannot fault the process.
//!
//! # Caching
//!
//! Each module file (and its debug file) is read and parsed once, on the first address in
//! it; DWARF units are parsed lazily by `addr2line`. Every resolved address is also cached,
//! so the millions of calls of a session cost one hash lookup each once their few distinct
//! call sites have been resolved. The cache is never evicted: its size is the number of
//! distinct addresses asked for.
//!
//! # Limits
//!
//! - The module map of a session has no build-ids, so a module rebuilt since the capture is
//!   read as if it were the one mapped: its lines are those of the new build. A debug file
//!   is only used when it matches the module file (build-id, debuglink CRC).
//! - Split DWARF (`.dwo`/`.dwp`), `.gnu_debugaltlink` (dwz) supplementary files and
//!   MiniDebugInfo (`.gnu_debugdata`) are not read: the frames they would name are missing
//!   or incomplete.
//! - ELF only (the platform gpuheat captures on).

use addr2line::gimli;
use gpuheat_session::{Module, ModuleMap};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The debug directory distributions install separate debug files into.
pub const DEFAULT_DEBUG_DIR: &str = "/usr/lib/debug";

/// Largest section we decompress: a corrupt compression header must not make us allocate
/// whatever size it claims.
const MAX_SECTION_BYTES: u64 = 1 << 30;

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// Why a module has no usable debug information, or could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SymbolError {
    /// The module (or a debug file) could not be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// The file is not an object file this crate understands, or is damaged.
    #[error("cannot parse {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// The file has no `PT_LOAD` segments, so no address in it can be placed.
    #[error("{path} has no loadable segments")]
    NoSegments {
        /// The file.
        path: PathBuf,
    },
    /// The DWARF of the debug file could not be loaded.
    #[error("bad DWARF in {path}: {reason}")]
    Dwarf {
        /// The debug file.
        path: PathBuf,
        /// What gimli said.
        reason: String,
    },
}

/// Where a module's DWARF came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebugSource {
    /// The module file itself carries it.
    Module,
    /// A separate debug file found by the module's build-id.
    BuildId(PathBuf),
    /// A separate debug file named by the module's `.gnu_debuglink`, its CRC checked.
    DebugLink(PathBuf),
}

/// One frame of a resolved address: the function and the source position in it.
///
/// For an address in inlined code, [`Location::frames`] holds one frame per inlining level,
/// innermost first: the first frame is the inlined function with the address's own line, each
/// next one the function it was inlined into, with the line of the (inlined) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Demangled function name (Rust and C++), when DWARF names it.
    pub function: Option<String>,
    /// Source file, as DWARF gives it joined with its compilation directory.
    pub file: Option<String>,
    /// Line in `file`, 1-based.
    pub line: Option<u32>,
    /// Column; `0` is the left edge.
    pub column: Option<u32>,
}

impl Frame {
    /// Whether the frame's file belongs to code the program did not write: the Rust standard
    /// library, a crate from the cargo registry or a git dependency, a toolchain or system
    /// header. A frame with no file is counted as library code, since no UI can show it.
    pub fn is_library(&self) -> bool {
        self.file.as_deref().is_none_or(is_library_path)
    }
}

/// Whether a source path is library code rather than the program's own, by where such files
/// live: `/rustc/<commit>/` (the standard library as shipped), `…/rustlib/src/rust/`
/// (rust-src), `…/.cargo/registry/` and `…/.cargo/git/` (dependencies), `…/.rustup/`,
/// `/usr/include/`, `/usr/lib/gcc/` and `/usr/src/` (C and C++ headers and runtimes).
pub fn is_library_path(path: &str) -> bool {
    const PREFIXES: [&str; 5] = [
        "/rustc/",
        "/usr/include/",
        "/usr/lib/gcc/",
        "/usr/src/",
        "/usr/local/include/",
    ];
    const PARTS: [&str; 5] = [
        "/rustlib/src/rust/",
        "/.cargo/registry/",
        "/.cargo/git/",
        "/.rustup/",
        "/cargo/registry/src/",
    ];
    PREFIXES.iter().any(|p| path.starts_with(p)) || PARTS.iter().any(|p| path.contains(p))
}

/// A resolved address.
///
/// Cheap to clone (the strings and frames are shared), so the per-address cache can hand one
/// out per call.
///
/// `Display` prints `file:line function` of the innermost frame (`file:line:column` is not
/// shown; the column is in [`Frame::column`]); with `{:#}` every frame follows, one per line,
/// as `  inlined into file:line function`. Without DWARF it prints `module+0xoffset` (the
/// module's file name, as the report does), followed by ` (symbol)` when the symbol table
/// names the function; outside every module, the bare address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    address: u64,
    module: Option<Arc<str>>,
    offset: u64,
    symbol: Option<Arc<str>>,
    frames: Arc<[Frame]>,
}

impl Location {
    fn unmapped(address: u64) -> Location {
        Location {
            address,
            module: None,
            offset: 0,
            symbol: None,
            frames: Arc::from(Vec::new()),
        }
    }

    /// The address that was asked for.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Path of the module the address lies in; `None` when it lies in no mapped module (JIT
    /// code, an anonymous mapping, a module loaded after the capture started).
    pub fn module(&self) -> Option<&str> {
        self.module.as_deref()
    }

    /// The module's file name (last path component).
    pub fn module_name(&self) -> Option<&str> {
        self.module
            .as_deref()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
    }

    /// File offset of the address in its module (`address - start + file_offset`), the same
    /// number `gpuheat report` prints; 0 when there is no module.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The function containing the address according to the ELF symbol table, demangled; a
    /// fallback for modules without DWARF.
    pub fn symbol(&self) -> Option<&str> {
        self.symbol.as_deref()
    }

    /// Frames from DWARF, innermost first; empty when no debug information was found.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The innermost frame.
    pub fn innermost(&self) -> Option<&Frame> {
        self.frames.first()
    }

    /// The first frame, innermost first, that is the program's own code (not
    /// [`Frame::is_library`]): for a GL call made inside an inlined helper of a dependency,
    /// the line of the program that led there. `None` when every frame is library code or
    /// there are none; then [`Location::innermost`] is the best there is.
    pub fn program_frame(&self) -> Option<&Frame> {
        self.frames.iter().find(|f| !f.is_library())
    }

    /// Whether DWARF gave at least one frame with a file and line.
    pub fn has_line(&self) -> bool {
        self.frames
            .iter()
            .any(|f| f.file.is_some() && f.line.is_some())
    }
}

fn write_frame(f: &mut fmt::Formatter<'_>, frame: &Frame) -> fmt::Result {
    match (&frame.file, frame.line) {
        (Some(file), Some(line)) => write!(f, "{file}:{line}")?,
        (Some(file), None) => write!(f, "{file}")?,
        (None, _) => write!(f, "??")?,
    }
    write!(f, " {}", frame.function.as_deref().unwrap_or("??"))
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(first) = self.frames.first() {
            write_frame(f, first)?;
            if f.alternate() {
                for outer in &self.frames[1..] {
                    write!(f, "\n  inlined into ")?;
                    write_frame(f, outer)?;
                }
            }
            return Ok(());
        }
        match self.module_name() {
            Some(name) => {
                write!(f, "{name}+{:#x}", self.offset)?;
                if let Some(symbol) = &self.symbol {
                    write!(f, " ({symbol})")?;
                }
                Ok(())
            }
            None => write!(f, "{:#x}", self.address),
        }
    }
}

/// A `PT_LOAD` segment: file range and where it is linked.
#[derive(Debug, Clone, Copy)]
struct Segment {
    offset: u64,
    file_size: u64,
    vaddr: u64,
}

/// A function symbol of the ELF symbol table.
#[derive(Debug)]
struct Symbol {
    vaddr: u64,
    size: u64,
    name: String,
}

/// A module read and parsed once.
struct Loaded {
    segments: Vec<Segment>,
    /// Sorted by address.
    symbols: Vec<Symbol>,
    /// `None` when no debug file was found, or the DWARF lookups panicked once.
    context: Option<addr2line::Context<Reader>>,
    debug: Option<DebugSource>,
    /// Why the debug information found could not be used (kept for [`Symbolizer::debug_info`]).
    debug_error: Option<SymbolError>,
}

impl Loaded {
    fn vaddr(&self, file_offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|s| file_offset >= s.offset && file_offset - s.offset < s.file_size)
            .map(|s| s.vaddr + (file_offset - s.offset))
    }

    fn symbol(&self, vaddr: u64) -> Option<&Symbol> {
        let i = self.symbols.partition_point(|s| s.vaddr <= vaddr);
        let s = self.symbols[..i].last()?;
        // A symbol of unknown size (hand-written assembly) is taken as reaching the next one.
        (s.size == 0 || vaddr - s.vaddr < s.size).then_some(s)
    }

    fn frames(&mut self, vaddr: u64) -> Vec<Frame> {
        let Some(context) = &self.context else {
            return Vec::new();
        };
        let found = catch_unwind(AssertUnwindSafe(|| collect_frames(context, vaddr)));
        match found {
            Ok(frames) => frames,
            Err(_) => {
                // A parser bug on hostile DWARF: do not trust this context's lazy state again.
                self.context = None;
                Vec::new()
            }
        }
    }
}

fn collect_frames(context: &addr2line::Context<Reader>, vaddr: u64) -> Vec<Frame> {
    let mut out = Vec::new();
    let Ok(mut iter) = context.find_frames(vaddr).skip_all_loads() else {
        return out;
    };
    // Damaged DWARF could describe an inlining chain without end.
    while let Ok(Some(frame)) = iter.next() {
        if out.len() >= 256 {
            break;
        }
        let function = frame
            .function
            .as_ref()
            .and_then(|name| name.demangle().ok())
            .map(Cow::into_owned);
        let (file, line, column) = match &frame.location {
            Some(l) => (l.file.map(str::to_string), l.line, l.column),
            None => (None, None, None),
        };
        out.push(Frame {
            function,
            file,
            line,
            column,
        });
    }
    // A location from the line table alone (no function DIE) gives one frame without name.
    if out.is_empty() {
        if let Ok(Some(l)) = context.find_location(vaddr) {
            out.push(Frame {
                function: None,
                file: l.file.map(str::to_string),
                line: l.line,
                column: l.column,
            });
        }
    }
    out
}

/// Turns addresses of a captured process into [`Location`]s.
///
/// Not `Sync`: the caches are filled through `&mut self`. Build one per thread, or put it
/// behind a lock.
pub struct Symbolizer {
    /// Sorted by start.
    modules: Vec<Module>,
    debug_dirs: Vec<PathBuf>,
    loaded: HashMap<String, Result<Loaded, SymbolError>>,
    /// Keyed by (address, whether it is a return address).
    cache: HashMap<(u64, bool), Location>,
}

impl fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Symbolizer")
            .field("modules", &self.modules.len())
            .field("debug_dirs", &self.debug_dirs)
            .field("loaded", &self.loaded.len())
            .field("cached", &self.cache.len())
            .finish()
    }
}

impl Symbolizer {
    /// A symbolizer for the modules of `map`, looking for separate debug files in
    /// [`DEFAULT_DEBUG_DIR`].
    pub fn new(map: &ModuleMap) -> Symbolizer {
        Symbolizer::with_debug_dirs(map, [PathBuf::from(DEFAULT_DEBUG_DIR)])
    }

    /// A symbolizer searching the given debug directories, in order, instead of the default
    /// (include [`DEFAULT_DEBUG_DIR`] to keep it).
    pub fn with_debug_dirs<I, P>(map: &ModuleMap, dirs: I) -> Symbolizer
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let mut modules: Vec<Module> = map
            .modules
            .iter()
            .filter(|m| m.start < m.end)
            .cloned()
            .collect();
        modules.sort_by_key(|m| m.start);
        Symbolizer {
            modules,
            debug_dirs: dirs.into_iter().map(Into::into).collect(),
            loaded: HashMap::new(),
            cache: HashMap::new(),
        }
    }

    /// Resolves a **return address** (a call site as the agent records it): the lookup is
    /// made at `address - 1`, inside the call instruction, so the line is the call's.
    pub fn resolve(&mut self, address: u64) -> Location {
        self.cached(address, true)
    }

    /// Resolves an exact instruction address (a program counter, a symbol's address).
    pub fn resolve_pc(&mut self, address: u64) -> Location {
        self.cached(address, false)
    }

    /// Where the DWARF of the module at `path` (a path of the module map) comes from:
    /// `Ok(None)` when none was found, `Err` when the module itself could not be read or
    /// when the debug information found was unusable. Loads the module if need be.
    pub fn debug_info(&mut self, path: &str) -> Result<Option<DebugSource>, SymbolError> {
        match self.load(path) {
            Ok(l) => match &l.debug_error {
                Some(e) => Err(e.clone()),
                None => Ok(l.debug.clone()),
            },
            Err(e) => Err(e.clone()),
        }
    }

    /// Number of distinct addresses resolved so far.
    pub fn cached_addresses(&self) -> usize {
        self.cache.len()
    }

    fn cached(&mut self, address: u64, is_return: bool) -> Location {
        if let Some(l) = self.cache.get(&(address, is_return)) {
            return l.clone();
        }
        let l = self.lookup(address, is_return);
        self.cache.insert((address, is_return), l.clone());
        l
    }

    fn module_of(&self, address: u64) -> Option<&Module> {
        let i = self.modules.partition_point(|m| m.start <= address);
        let m = self.modules[..i].last()?;
        (address < m.end).then_some(m)
    }

    fn lookup(&mut self, address: u64, is_return: bool) -> Location {
        let Some(module) = self.module_of(address).cloned() else {
            return Location::unmapped(address);
        };
        let offset = address - module.start + module.file_offset;
        let mut location = Location {
            address,
            module: Some(Arc::from(module.path.as_str())),
            offset,
            symbol: None,
            frames: Arc::from(Vec::new()),
        };
        let pc_offset = if is_return {
            // A return address at the very start of a mapping cannot follow a call in it.
            match offset.checked_sub(1) {
                Some(o) if address > module.start => o,
                _ => return location,
            }
        } else {
            offset
        };
        let Ok(loaded) = self.load_mut(&module.path) else {
            return location;
        };
        let Some(vaddr) = loaded.vaddr(pc_offset) else {
            return location;
        };
        location.symbol = loaded
            .symbol(vaddr)
            .map(|s| Arc::from(addr2line::demangle_auto(Cow::Borrowed(&s.name), None)));
        location.frames = Arc::from(loaded.frames(vaddr));
        location
    }

    fn load(&mut self, path: &str) -> Result<&Loaded, &SymbolError> {
        self.load_mut(path).map(|l| &*l)
    }

    fn load_mut(&mut self, path: &str) -> Result<&mut Loaded, &SymbolError> {
        if !self.loaded.contains_key(path) {
            let dirs = &self.debug_dirs;
            let loaded = catch_unwind(AssertUnwindSafe(|| load_module(Path::new(path), dirs)))
                .unwrap_or_else(|_| {
                    Err(SymbolError::Parse {
                        path: path.into(),
                        reason: "the parser panicked".into(),
                    })
                });
            self.loaded.insert(path.to_string(), loaded);
        }
        self.loaded
            .get_mut(path)
            .expect("inserted above")
            .as_mut()
            .map_err(|e| &*e)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, SymbolError> {
    std::fs::read(path).map_err(|e| SymbolError::Io {
        path: path.into(),
        reason: e.to_string(),
    })
}

fn parse<'d>(path: &Path, data: &'d [u8]) -> Result<object::File<'d>, SymbolError> {
    object::File::parse(data).map_err(|e| SymbolError::Parse {
        path: path.into(),
        reason: e.to_string(),
    })
}

fn has_dwarf(obj: &object::File<'_>) -> bool {
    obj.section_by_name(".debug_info")
        .is_some_and(|s| s.file_range().is_some_and(|(_, size)| size > 0))
}

fn load_module(path: &Path, debug_dirs: &[PathBuf]) -> Result<Loaded, SymbolError> {
    let data = read(path)?;
    let obj = parse(path, &data)?;
    let segments: Vec<Segment> = obj
        .segments()
        .map(|s| {
            let (offset, file_size) = s.file_range();
            Segment {
                offset,
                file_size,
                vaddr: s.address(),
            }
        })
        .filter(|s| s.file_size > 0)
        .collect();
    if segments.is_empty() {
        return Err(SymbolError::NoSegments { path: path.into() });
    }
    let mut symbols = function_symbols(&obj);
    let mut loaded = Loaded {
        segments,
        symbols: Vec::new(),
        context: None,
        debug: None,
        debug_error: None,
    };

    let found = if has_dwarf(&obj) {
        Some((DebugSource::Module, context(path, &obj)))
    } else {
        find_debug_file(path, &obj, debug_dirs).map(|(source, debug_path, debug_data)| {
            let context = parse(&debug_path, &debug_data).and_then(|dobj| {
                if symbols.is_empty() {
                    symbols = function_symbols(&dobj);
                }
                context(&debug_path, &dobj)
            });
            (source, context)
        })
    };
    if let Some((source, context)) = found {
        loaded.debug = Some(source);
        match context {
            Ok(c) => loaded.context = Some(c),
            Err(e) => loaded.debug_error = Some(e),
        }
    }
    symbols.sort_by_key(|s| s.vaddr);
    loaded.symbols = symbols;
    Ok(loaded)
}

/// Function symbols of `.symtab`, else of `.dynsym`.
fn function_symbols(obj: &object::File<'_>) -> Vec<Symbol> {
    let collect = |iter: &mut dyn Iterator<Item = object::Symbol<'_, '_>>| {
        iter.filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition())
            .filter(|s| s.address() != 0)
            .filter_map(|s| {
                Some(Symbol {
                    vaddr: s.address(),
                    size: s.size(),
                    name: s.name().ok()?.to_string(),
                })
            })
            .collect::<Vec<_>>()
    };
    let symbols = collect(&mut obj.symbols());
    if symbols.is_empty() {
        collect(&mut obj.dynamic_symbols())
    } else {
        symbols
    }
}

fn context(path: &Path, obj: &object::File<'_>) -> Result<addr2line::Context<Reader>, SymbolError> {
    let endian = if obj.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let bad = |reason: String| SymbolError::Dwarf {
        path: path.into(),
        reason,
    };
    let load = |id: gimli::SectionId| -> Result<Reader, SymbolError> {
        let bytes: Arc<[u8]> = match obj.section_by_name(id.name()) {
            Some(section) => {
                let compressed = section
                    .compressed_data()
                    .map_err(|e| bad(format!("{}: {e}", id.name())))?;
                if compressed.uncompressed_size > MAX_SECTION_BYTES {
                    return Err(bad(format!(
                        "{}: claims {} bytes uncompressed",
                        id.name(),
                        compressed.uncompressed_size
                    )));
                }
                let data = compressed
                    .decompress()
                    .map_err(|e| bad(format!("{}: {e}", id.name())))?;
                Arc::from(data.as_ref())
            }
            None => Arc::from(&[][..]),
        };
        Ok(gimli::EndianArcSlice::new(bytes, endian))
    };
    let dwarf = gimli::Dwarf::load(load)?;
    addr2line::Context::from_dwarf(dwarf).map_err(|e| bad(e.to_string()))
}

/// The separate debug file of a module without DWARF: its source, path and bytes.
fn find_debug_file(
    path: &Path,
    obj: &object::File<'_>,
    debug_dirs: &[PathBuf],
) -> Option<(DebugSource, PathBuf, Vec<u8>)> {
    let build_id = obj.build_id().ok().flatten().filter(|id| id.len() >= 2);
    if let Some(id) = build_id {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        for dir in debug_dirs {
            let candidate = dir
                .join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]));
            let Ok(data) = std::fs::read(&candidate) else {
                continue;
            };
            let usable = object::File::parse(&*data)
                .is_ok_and(|d| d.build_id().ok().flatten() == Some(id) && has_dwarf(&d));
            if usable {
                return Some((DebugSource::BuildId(candidate.clone()), candidate, data));
            }
        }
    }

    let (name, crc) = obj.gnu_debuglink().ok().flatten()?;
    let name = std::str::from_utf8(name).ok()?;
    // A link is a file name; anything else could walk out of the search directories.
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let dir = path.parent()?;
    let mut candidates = vec![dir.join(name), dir.join(".debug").join(name)];
    let absolute_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let relative = absolute_dir.strip_prefix("/").unwrap_or(&absolute_dir);
    candidates.extend(debug_dirs.iter().map(|d| d.join(relative).join(name)));
    let module_real = std::fs::canonicalize(path).ok();
    for candidate in candidates {
        if module_real.is_some() && std::fs::canonicalize(&candidate).ok() == module_real {
            continue;
        }
        let Ok(data) = std::fs::read(&candidate) else {
            continue;
        };
        if crc32fast::hash(&data) != crc {
            continue;
        }
        let usable = object::File::parse(&*data).is_ok_and(|d| {
            let ids_agree = match (build_id, d.build_id().ok().flatten()) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            ids_agree && has_dwarf(&d)
        });
        if usable {
            return Some((DebugSource::DebugLink(candidate.clone()), candidate, data));
        }
    }
    None
}
