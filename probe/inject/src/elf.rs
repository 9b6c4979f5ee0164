//! Symbols of the target's mapped files, read from the ELF files on disk (never from the
//! injector's own address space) and rebased by each file's load bias in the target.

use std::fs;
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionTable, Sym};
use object::{Endianness, SymbolIndex};

use crate::procfs::Mapping;

/// A file's bytes, mapped rather than read: only the pages the symbol lookup touches (headers,
/// `.dynsym`, `.dynstr`) come from disk. The agent library is ~30 MB with its debug information,
/// and reading it whole, then again for each safe-point name once it was loaded, took 45–100
/// ms of every attach (neverball, llvmpipe machine).
pub(crate) struct FileBytes(memmap2::Mmap);

impl FileBytes {
    /// Maps `path` read-only.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = fs::File::open(path)?;
        // SAFETY: the mapping is private and read-only, and lives as long as this value. The
        // files are shared libraries a running program has mapped, or the agent library about to
        // be loaded: replaced (a new inode) by installers and linkers, not rewritten in place. A
        // file truncated under us would fault this process (the CLI), never the target.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(FileBytes(map))
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// All the mappings of one file in the target.
#[derive(Clone, Debug)]
pub(crate) struct Module {
    pub path: String,
    pub mappings: Vec<Mapping>,
}

impl Module {
    /// The file name (`libEGL.so.1`).
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Reads the mapped file. Tries, in order: the exact mapped file through
    /// /proc/PID/map_files (right even if it was replaced on disk), the path in the target's
    /// mount namespace (/proc/PID/root/PATH), the path as seen here.
    pub fn read(&self, pid: i32) -> io::Result<FileBytes> {
        let mut last = None;
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(m) = self.mappings.first() {
            candidates.push(format!("/proc/{pid}/map_files/{:x}-{:x}", m.start, m.end).into());
        }
        candidates.push(format!("/proc/{pid}/root{}", self.path).into());
        candidates.push(PathBuf::from(&self.path));
        for c in candidates {
            match FileBytes::open(&c) {
                Ok(data) => return Ok(data),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
    }

    /// The module's load bias in the target, from its ELF program headers and mappings.
    pub fn load_bias(&self, image: &Image) -> Option<u64> {
        image.load_bias(&self.mappings)
    }
}

/// Groups file mappings by file, in order of first appearance.
pub(crate) fn modules(maps: &[Mapping]) -> Vec<Module> {
    let mut out: Vec<Module> = Vec::new();
    for m in maps.iter().filter(|m| m.is_file()) {
        let path = m.path.clone().unwrap_or_default();
        match out.iter_mut().find(|x| {
            x.path == path && x.mappings[0].dev == m.dev && x.mappings[0].inode == m.inode
        }) {
            Some(x) => x.mappings.push(m.clone()),
            None => out.push(Module {
                path,
                mappings: vec![m.clone()],
            }),
        }
    }
    out
}

/// A parsed 64-bit ELF file.
pub(crate) struct Image<'data> {
    header: &'data elf::FileHeader64<Endianness>,
    endian: Endianness,
    data: &'data [u8],
    sections: SectionTable<'data, elf::FileHeader64<Endianness>>,
}

/// Where a function is, relative to its file (add the load bias for the address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FoundSymbol {
    pub value: u64,
}

impl<'data> Image<'data> {
    pub fn parse(data: &'data [u8], path: &Path) -> Result<Self, crate::InjectError> {
        let err = |message: String| crate::InjectError::Elf {
            path: path.to_path_buf(),
            message,
        };
        if data.len() < 5 || &data[..4] != b"\x7fELF" {
            return Err(err("not an ELF file".into()));
        }
        if data[4] != elf::ELFCLASS64 {
            return Err(crate::InjectError::UnsupportedArchitecture {
                what: format!("{} is a 32-bit ELF file", path.display()),
            });
        }
        let header =
            elf::FileHeader64::<Endianness>::parse(data).map_err(|e| err(e.to_string()))?;
        let endian = header.endian().map_err(|e| err(e.to_string()))?;
        let sections = header
            .sections(endian, data)
            .map_err(|e| err(e.to_string()))?;
        Ok(Image {
            header,
            endian,
            data,
            sections,
        })
    }

    /// `e_machine` (e.g. `EM_X86_64`).
    #[cfg(test)]
    pub fn machine(&self) -> u16 {
        self.header.e_machine(self.endian)
    }

    /// Finds a defined function named `name`: first in `.dynsym` (preferring the default
    /// version, `name@@VER`, over hidden compatibility versions `name@VER`), then in
    /// `.symtab`. GNU indirect functions are skipped (their value is a resolver).
    pub fn find_function(&self, name: &str) -> Option<FoundSymbol> {
        for kind in [elf::SHT_DYNSYM, elf::SHT_SYMTAB] {
            let Ok(table) = self.sections.symbols(self.endian, self.data, kind) else {
                continue;
            };
            let versions = if kind == elf::SHT_DYNSYM {
                self.sections
                    .versions(self.endian, self.data)
                    .ok()
                    .flatten()
            } else {
                None
            };
            let mut best: Option<(bool, FoundSymbol)> = None;
            for (index, sym) in table.enumerate() {
                if sym.st_type() != elf::STT_FUNC
                    || sym.st_shndx(self.endian) == elf::SHN_UNDEF
                    || sym.st_value(self.endian) == 0
                    || !matches!(sym.st_bind(), elf::STB_GLOBAL | elf::STB_WEAK)
                {
                    continue;
                }
                if table.symbol_name(self.endian, sym).ok() != Some(name.as_bytes()) {
                    continue;
                }
                let hidden = versions
                    .as_ref()
                    .map(|v| {
                        v.version_index(self.endian, SymbolIndex(index.0))
                            .is_hidden()
                    })
                    .unwrap_or(false);
                let found = FoundSymbol {
                    value: sym.st_value(self.endian),
                };
                if !hidden {
                    return Some(found);
                }
                best.get_or_insert((hidden, found));
            }
            if let Some((_, found)) = best {
                return Some(found);
            }
        }
        None
    }

    /// The load bias given this file's mappings in the target: for the first `PT_LOAD`
    /// segment whose page-aligned file offset is mapped, `start - page_align(p_vaddr)`.
    pub fn load_bias(&self, mappings: &[Mapping]) -> Option<u64> {
        let page = page_size();
        let phdrs = self.header.program_headers(self.endian, self.data).ok()?;
        for ph in phdrs
            .iter()
            .filter(|p| p.p_type(self.endian) == elf::PT_LOAD)
        {
            let off = ph.p_offset(self.endian) & !(page - 1);
            let vaddr = ph.p_vaddr(self.endian) & !(page - 1);
            if let Some(m) = mappings.iter().find(|m| m.offset == off) {
                return Some(m.start.wrapping_sub(vaddr));
            }
        }
        None
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our own libc, read as the injector reads a target's: the address found from the
    /// file plus the load bias equals the address the dynamic linker gave us.
    #[test]
    fn own_libc_symbols_match_the_loader() {
        let maps = crate::procfs::read_maps(std::process::id() as i32).unwrap();
        let mods = modules(&maps);
        let libc_mod = mods
            .iter()
            .find(|m| m.file_name().starts_with("libc.so"))
            .expect("libc mapped");
        let data = libc_mod.read(std::process::id() as i32).unwrap();
        let image = Image::parse(&data, Path::new(&libc_mod.path)).unwrap();
        assert_eq!(image.machine(), elf::EM_X86_64);
        let bias = libc_mod.load_bias(&image).unwrap();
        let getpid = image.find_function("getpid").unwrap().value + bias;
        assert_eq!(getpid, libc::getpid as *const () as usize as u64);
        // glibc ≥ 2.34 has dlopen@@GLIBC_2.34 (default) and dlopen@GLIBC_2.2.5; we must
        // pick what the dynamic linker binds new references to.
        let dlopen = image.find_function("dlopen").unwrap().value + bias;
        assert_eq!(dlopen, libc::dlopen as *const () as usize as u64);
        assert!(image.find_function("no_such_function_here").is_none());
    }
}
