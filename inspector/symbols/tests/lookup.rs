//! Symbolizing real binaries: this test executable itself, copied, stripped with `objcopy`,
//! its DWARF moved to a build-id or debuglink file, mapped as the loader would map it.
//! Expected lines come from marker comments in this file, expected addresses from the symbol
//! table of the unstripped executable, never from the code under test.

use gpuheat_session::{Module, ModuleMap};
use gpuheat_symbols::{is_library_path, DebugSource, Location, Symbolizer};
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Object, ObjectSymbol};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const TARGET: &str = "gpuheat_symbols_test_target";
const CALLER: &str = "gpuheat_symbols_test_caller";

/// A function whose entry address the tests look up.
#[inline(never)]
#[no_mangle]
// The function's entry is on the next line (rustfmt keeps no comment after its brace).
// MARK: target
pub extern "C" fn gpuheat_symbols_test_target(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3)
}

#[inline(always)]
fn inlined_helper(x: u32) -> u32 {
    x.wrapping_add(7) ^ 0x55 // MARK: helper body
}

/// A function with an inlined call, whose call site the tests look up.
#[inline(never)]
#[no_mangle]
pub extern "C" fn gpuheat_symbols_test_caller(x: u32) -> u32 {
    let y = std::hint::black_box(x);
    inlined_helper(y) // MARK: inlined call
}

/// Line of the comment `// MARK: <what>` in this file (the pattern is built so that this
/// function's own text does not match).
fn marker_line(what: &str) -> u32 {
    let needle = format!("// {}: {what}", "MARK");
    let src = include_str!("lookup.rs");
    let lines: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "marker {needle:?}: {lines:?}");
    lines[0] as u32
}

/// The line of `fn gpuheat_symbols_test_target`, where its first instruction is.
fn target_line() -> u32 {
    marker_line("target") + 1
}

fn exe() -> PathBuf {
    // Keep the marker functions referenced, so no linker drops them.
    std::hint::black_box(gpuheat_symbols_test_target as extern "C" fn(u64) -> u64);
    std::hint::black_box(gpuheat_symbols_test_caller as extern "C" fn(u32) -> u32);
    std::env::current_exe().unwrap()
}

use gpuheat_testkit::Scratch;

/// A fresh scratch directory for one test, removed on drop.
fn scratch(test: &str) -> Scratch {
    Scratch::new("gpuheat-symbols", test)
}

fn objcopy(args: &[&str]) {
    let out = Command::new("objcopy")
        .args(args)
        .output()
        .expect("objcopy");
    assert!(
        out.status.success(),
        "objcopy {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (address, size) of a symbol in the symbol table of `path`.
fn symbol(path: &Path, name: &str) -> (u64, u64) {
    let data = std::fs::read(path).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    let sym = obj
        .symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("{name} not in the symbol table of {}", path.display()));
    (sym.address(), sym.size())
}

fn build_id(path: &Path) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    obj.build_id()
        .unwrap()
        .expect("the test executable has a build-id")
        .to_vec()
}

/// Where the loader of a PIE would put it in these tests.
const BASE: u64 = 0x5555_5555_4000;

/// The executable mappings of `path` as the kernel would make them (page-aligned PT_LOAD
/// segments with PF_X), loaded at [`BASE`] when it is position-independent; and that base.
fn mapped(path: &Path) -> (ModuleMap, u64) {
    let data = std::fs::read(path).unwrap();
    let elf = ElfFile64::<object::Endianness>::parse(&*data).unwrap();
    let e = elf.endian();
    let base = if elf.elf_header().e_type(e) == object::elf::ET_DYN {
        BASE
    } else {
        0
    };
    let page = |v: u64| v & !0xfff;
    let modules = elf
        .elf_program_headers()
        .iter()
        .filter(|ph| ph.p_type(e) == object::elf::PT_LOAD)
        .filter(|ph| ph.p_flags(e).contains(object::elf::PF_X))
        .map(|ph| {
            let vaddr = ph.p_vaddr(e);
            Module {
                path: path.to_str().unwrap().to_string(),
                start: base + page(vaddr),
                end: base + page(vaddr + ph.p_memsz(e) + 0xfff),
                file_offset: page(ph.p_offset(e)),
            }
        })
        .collect();
    (ModuleMap { modules }, base)
}

fn assert_target(l: &Location) {
    let f = l.innermost().unwrap_or_else(|| panic!("no frames: {l}"));
    assert!(
        f.file
            .as_deref()
            .unwrap()
            .ends_with("symbols/tests/lookup.rs"),
        "{l}"
    );
    assert_eq!(f.line, Some(target_line()), "{l}");
    assert_eq!(f.function.as_deref(), Some(TARGET), "{l}");
    assert_eq!(l.program_frame(), Some(f));
    assert!(l.has_line());
    let shown = l.to_string();
    assert!(
        shown.ends_with(&format!("lookup.rs:{} {TARGET}", target_line())),
        "{shown}"
    );
}

fn assert_bare(l: &Location, module: &Path, offset: u64) {
    assert!(l.frames().is_empty(), "{l:#}");
    assert_eq!(l.module(), module.to_str());
    assert_eq!(l.offset(), offset);
    let name = module.file_name().unwrap().to_str().unwrap();
    assert!(
        l.to_string().starts_with(&format!("{name}+{offset:#x}")),
        "{l}"
    );
}

/// The address, its module offset, and a symbolizer over a stripped copy of the test binary
/// whose only DWARF source is what `setup` arranges.
struct Stripped {
    dir: Scratch,
    module: PathBuf,
    map: ModuleMap,
    target: u64,
    target_offset: u64,
}

fn stripped(test: &str, strip_args: &[&str]) -> Stripped {
    let dir = scratch(test);
    let module = dir.join("prog");
    let mut args = vec!["--strip-debug"];
    args.extend_from_slice(strip_args);
    let (exe, module_s) = (exe(), module.to_str().unwrap().to_string());
    args.extend_from_slice(&[exe.to_str().unwrap(), &module_s]);
    objcopy(&args);
    let (map, base) = mapped(&module);
    let (vaddr, _) = symbol(&exe, TARGET);
    let target = base + vaddr;
    let m = map
        .modules
        .iter()
        .find(|m| m.start <= target && target < m.end)
        .unwrap();
    let target_offset = target - m.start + m.file_offset;
    Stripped {
        dir,
        module,
        map,
        target,
        target_offset,
    }
}

#[test]
fn unstripped_executable_resolves_from_its_own_dwarf() {
    let exe = exe();
    let (map, base) = mapped(&exe);
    let (vaddr, _) = symbol(&exe, TARGET);
    let mut s = Symbolizer::with_debug_dirs(&map, Vec::<PathBuf>::new());
    assert_target(&s.resolve_pc(base + vaddr));
    assert_eq!(
        s.debug_info(exe.to_str().unwrap()),
        Ok(Some(DebugSource::Module))
    );
}

#[test]
fn build_id_debug_file_gives_file_and_line() {
    let st = stripped("build-id", &[]);
    let id = build_id(&st.module);
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let debug_dir = st.dir.join("debug");
    let debug_file = debug_dir
        .join(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]));
    std::fs::create_dir_all(debug_file.parent().unwrap()).unwrap();
    objcopy(&[
        "--only-keep-debug",
        exe().to_str().unwrap(),
        debug_file.to_str().unwrap(),
    ]);

    // Without the debug directory: symbol table only.
    let mut plain = Symbolizer::with_debug_dirs(&st.map, Vec::<PathBuf>::new());
    let l = plain.resolve_pc(st.target);
    assert_bare(&l, &st.module, st.target_offset);
    assert_eq!(l.symbol(), Some(TARGET), "strip-debug keeps .symtab");
    assert_eq!(
        l.to_string(),
        format!("prog+{:#x} ({TARGET})", st.target_offset)
    );

    let mut s = Symbolizer::with_debug_dirs(&st.map, [&debug_dir]);
    assert_target(&s.resolve_pc(st.target));
    // A return address just past the function's first byte: the lookup is made one byte
    // before it, inside the function.
    let ret = s.resolve(st.target + 1);
    assert_target(&ret);
    assert_eq!(ret.offset(), st.target_offset + 1);
    assert_eq!(
        s.debug_info(st.module.to_str().unwrap()),
        Ok(Some(DebugSource::BuildId(debug_file.clone())))
    );

    // A file at the build-id path whose own build-id differs is not this module's.
    let mut data = std::fs::read(&debug_file).unwrap();
    let at = data
        .windows(id.len())
        .position(|w| w == id.as_slice())
        .unwrap();
    data[at + id.len() - 1] ^= 0xff;
    std::fs::write(&debug_file, &data).unwrap();
    let mut s = Symbolizer::with_debug_dirs(&st.map, [&debug_dir]);
    assert_bare(&s.resolve_pc(st.target), &st.module, st.target_offset);
    assert_eq!(s.debug_info(st.module.to_str().unwrap()), Ok(None));
}

#[test]
fn debuglink_is_searched_next_to_the_module_in_dot_debug_and_in_the_debug_dir() {
    let dir = scratch("debuglink-src");
    let debug = dir.join("prog.dbg");
    objcopy(&[
        "--only-keep-debug",
        exe().to_str().unwrap(),
        debug.to_str().unwrap(),
    ]);
    let link = format!("--add-gnu-debuglink={}", debug.display());
    let st = stripped("debuglink", &["--remove-section=.note.gnu.build-id", &link]);
    assert!(
        object::File::parse(&*std::fs::read(&st.module).unwrap())
            .unwrap()
            .build_id()
            .unwrap()
            .is_none(),
        "the build-id note was removed, so only the link can find the file"
    );
    let debug_dir = st.dir.join("debugroot");
    let module_dir = std::fs::canonicalize(&st.dir).unwrap();
    let places = [
        st.dir.join("prog.dbg"),
        st.dir.join(".debug").join("prog.dbg"),
        debug_dir
            .join(module_dir.strip_prefix("/").unwrap())
            .join("prog.dbg"),
    ];
    for place in &places {
        std::fs::create_dir_all(place.parent().unwrap()).unwrap();
        std::fs::copy(&debug, place).unwrap();
        let mut s = Symbolizer::with_debug_dirs(&st.map, [&debug_dir]);
        assert_target(&s.resolve_pc(st.target));
        assert_eq!(
            s.debug_info(st.module.to_str().unwrap()),
            Ok(Some(DebugSource::DebugLink(place.clone())))
        );

        // One byte more and the CRC no longer matches: not the linked file.
        let mut data = std::fs::read(&debug).unwrap();
        data.push(0);
        std::fs::write(place, &data).unwrap();
        let mut s = Symbolizer::with_debug_dirs(&st.map, [&debug_dir]);
        assert_bare(&s.resolve_pc(st.target), &st.module, st.target_offset);
        std::fs::remove_file(place).unwrap();
    }
}

#[test]
fn stripped_module_without_debug_file_gives_module_and_offset() {
    let st = stripped("no-debug", &["--strip-all"]);
    let mut s = Symbolizer::new(&st.map);
    let l = s.resolve(st.target + 1);
    assert_bare(&l, &st.module, st.target_offset + 1);
    assert_eq!(s.debug_info(st.module.to_str().unwrap()), Ok(None));
}

#[test]
fn missing_module_file_gives_module_and_offset() {
    let st = stripped("missing", &[]);
    std::fs::remove_file(&st.module).unwrap();
    let mut s = Symbolizer::new(&st.map);
    let l = s.resolve(st.target);
    assert_bare(&l, &st.module, st.target_offset);
    assert_eq!(l.symbol(), None);
    assert!(matches!(
        s.debug_info(st.module.to_str().unwrap()),
        Err(gpuheat_symbols::SymbolError::Io { .. })
    ));
}

#[test]
fn garbage_truncated_and_odd_module_files_give_module_and_offset() {
    let dir = scratch("garbage");
    let exe_bytes = std::fs::read(exe()).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("elf-magic".into(), b"\x7fELF".to_vec()),
    ];
    // xorshift: reproducible "random" bytes, with and without an ELF header in front.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    files.push(("random".into(), random(1 << 16)));
    let mut headed = exe_bytes[..64].to_vec();
    headed.extend(random(1 << 16));
    files.push(("elf-header-then-random".into(), headed));
    for cut in [
        16,
        64,
        200,
        4096,
        65536,
        exe_bytes.len() / 3,
        exe_bytes.len() - 1,
    ] {
        files.push((format!("truncated-{cut}"), exe_bytes[..cut].to_vec()));
    }
    // The real executable with its bytes scrambled in stripes, past the ELF header.
    for stripe in 0..8 {
        let mut d = exe_bytes.clone();
        let len = d.len();
        for (i, b) in d.iter_mut().enumerate().skip(64) {
            if (i * 8 / len) == stripe && i % 7 == 0 {
                *b = b.wrapping_mul(31).wrapping_add(i as u8);
            }
        }
        files.push((format!("scrambled-{stripe}"), d));
    }

    let (exe_map, base) = mapped(&exe());
    let (vaddr, size) = symbol(&exe(), TARGET);
    for (name, bytes) in &files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        // Mapped where the real executable would be.
        let map = ModuleMap {
            modules: exe_map
                .modules
                .iter()
                .map(|m| Module {
                    path: path.to_str().unwrap().into(),
                    ..m.clone()
                })
                .collect(),
        };
        let mut s = Symbolizer::new(&map);
        for a in [base + vaddr, base + vaddr + size / 2, base + vaddr + 1] {
            let l = s.resolve(a);
            assert_eq!(l.module(), path.to_str(), "{name}");
            if !name.starts_with("scrambled") {
                assert!(l.frames().is_empty(), "{name}: {l}");
                assert!(l.to_string().starts_with(&format!("{name}+0x")), "{l}");
            }
        }
    }

    // A directory where the module should be.
    let map = ModuleMap {
        modules: vec![Module {
            path: dir.to_str().unwrap().into(),
            start: 0x1000,
            end: 0x2000,
            file_offset: 0,
        }],
    };
    let mut s = Symbolizer::new(&map);
    let name = dir.file_name().unwrap().to_str().unwrap();
    assert_eq!(s.resolve(0x1800).to_string(), format!("{name}+0x800"));
    // Outside every module: the bare address.
    let l = s.resolve(0x2000);
    assert_eq!((l.module(), l.to_string()), (None, "0x2000".to_string()));
    // A return address at the start of a mapping follows no call in it.
    assert!(s.resolve(0x1000).frames().is_empty());
}

/// The executable mappings of this process, read from /proc/self/maps as the agent does.
fn self_maps() -> ModuleMap {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let modules = maps
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || !f[1].contains('x') || !f[5].starts_with('/') {
                return None;
            }
            let (a, b) = f[0].split_once('-')?;
            Some(Module {
                path: f[5].into(),
                start: u64::from_str_radix(a, 16).ok()?,
                end: u64::from_str_radix(b, 16).ok()?,
                file_offset: u64::from_str_radix(f[2], 16).ok()?,
            })
        })
        .collect();
    ModuleMap { modules }
}

#[test]
fn live_process_addresses_resolve_through_the_kernels_mappings() {
    let map = self_maps();
    let mut s = Symbolizer::new(&map);
    let target = gpuheat_symbols_test_target as extern "C" fn(u64) -> u64 as usize as u64;
    let l = s.resolve_pc(target);
    assert_eq!(
        l.module().map(Path::new),
        Some(std::fs::canonicalize(exe()).unwrap().as_path())
    );
    assert_target(&l);
}

#[test]
fn inlined_frames_come_innermost_first_and_program_frame_skips_std() {
    let exe = exe();
    let (map, base) = mapped(&exe);
    let (vaddr, size) = symbol(&exe, CALLER);
    let mut s = Symbolizer::with_debug_dirs(&map, Vec::<PathBuf>::new());
    let (helper, call) = (marker_line("helper body"), marker_line("inlined call"));
    let mut saw_helper = false;
    let mut saw_std = false;
    for a in base + vaddr..base + vaddr + size {
        let l = s.resolve_pc(a);
        let frames = l.frames();
        assert!(!frames.is_empty(), "{a:#x}");
        let outer = frames.last().unwrap();
        assert_eq!(outer.function.as_deref(), Some(CALLER), "{l:#}");
        let lines: Vec<Option<u32>> = frames.iter().map(|f| f.line).collect();
        let ours = |f: &gpuheat_symbols::Frame| {
            f.file.as_deref().is_some_and(|p| p.ends_with("lookup.rs"))
        };
        if let Some(i) = frames
            .iter()
            .position(|f| ours(f) && f.line == Some(helper))
        {
            saw_helper = true;
            assert!(frames[i]
                .function
                .as_deref()
                .unwrap()
                .ends_with("inlined_helper"));
            assert_eq!(frames[i + 1].line, Some(call), "{l:#}");
            assert_eq!(frames.len(), i + 2, "{lines:?}");
            if i > 0 {
                // Something of core inlined into the helper (u32::wrapping_add).
                assert!(frames[..i].iter().all(|f| f.is_library()), "{l:#}");
                assert_eq!(l.program_frame(), Some(&frames[i]));
                assert_eq!(l.innermost(), Some(&frames[0]));
                assert!(format!("{l:#}").contains("\n  inlined into "));
                saw_std = true;
            }
        }
    }
    assert!(
        saw_helper,
        "no address of {CALLER} is in the inlined helper"
    );
    assert!(
        saw_std,
        "no address of {CALLER} is in core's inlined wrapping_add"
    );
}

#[test]
fn library_paths() {
    for p in [
        "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/num/mod.rs",
        "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/src/de.rs",
        "/home/u/.cargo/git/checkouts/x-1234/abc/src/lib.rs",
        "/home/u/.rustup/toolchains/stable/lib/rustlib/src/rust/library/std/src/lib.rs",
        "/usr/include/c++/12/bits/stl_vector.h",
    ] {
        assert!(is_library_path(p), "{p}");
    }
    for p in [
        "/work/main/examples/src/bin/hot_spot.rs",
        "src/main.rs",
        "/usr/local/src/app/main.c",
    ] {
        assert!(!is_library_path(p), "{p}");
    }
}

/// Cold (modules parsed, DWARF units read) and cached costs of symbolizing every function
/// of this executable; printed for the record, bounded loosely so a regression shows.
#[test]
fn distinct_addresses_cold_and_cached() {
    let exe = exe();
    let (map, base) = mapped(&exe);
    let data = std::fs::read(&exe).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    let mut addrs: Vec<u64> = obj
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0 && s.size() > 1)
        .map(|s| base + s.address() + 1)
        .collect();
    addrs.sort_unstable();
    addrs.dedup();
    assert!(addrs.len() > 1000, "{}", addrs.len());
    let mut s = Symbolizer::with_debug_dirs(&map, Vec::<PathBuf>::new());
    let t = Instant::now();
    let mut with_line = usize::from(s.resolve(addrs[0]).has_line());
    let first = t.elapsed();
    for &a in &addrs[1..] {
        with_line += usize::from(s.resolve(a).has_line());
    }
    let cold = t.elapsed();
    let t = Instant::now();
    let rounds = 10;
    for _ in 0..rounds {
        for &a in &addrs {
            std::hint::black_box(s.resolve(a));
        }
    }
    let cached = t.elapsed() / rounds;
    let n = addrs.len() as u32;
    eprintln!(
        "{n} distinct addresses ({with_line} with a line): cold {:?} (first, loading the \
         module: {first:?}; {:?}/address), cached {:?} ({:?}/address)",
        cold,
        cold / n,
        cached,
        cached / n
    );
    assert!(with_line * 10 >= addrs.len() * 9, "{with_line} of {n}");
    assert!(cached / n < std::time::Duration::from_micros(20));
    assert_eq!(s.cached_addresses(), addrs.len());
}
