//! The one parser of `/proc/PID/maps`, shared by the injector (the target's modules) and the
//! agent (its module map for call sites, page protections for live hooks). It lives on the
//! probe side, in a leaf crate of its own: nothing of it crosses the process boundary (the
//! session holds the module map the agent derives from it, not mappings).
//!
//! A line is `start-end perms offset major:minor inode path`: the first five fields are
//! separated by single spaces, then the kernel pads with spaces up to a column before the
//! path. The path may itself contain spaces (so splitting on whitespace loses it), is empty
//! for anonymous memory, is a pseudo-name such as `[heap]` or `[vdso]`, and ends in
//! ` (deleted)` when the file was removed or replaced after it was mapped.

use std::fmt;
use std::io;

/// The `rwxp` column of a mapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Perms {
    /// `r`: readable.
    pub read: bool,
    /// `w`: writable.
    pub write: bool,
    /// `x`: executable.
    pub exec: bool,
    /// `s` (shared) rather than `p` (private, copy-on-write).
    pub shared: bool,
}

impl Perms {
    /// Parses the four-letter column (`r-xp`, `rw-s`, …); `None` for anything else.
    pub fn parse(s: &str) -> Option<Perms> {
        let b = s.as_bytes();
        if b.len() != 4 {
            return None;
        }
        let flag = |i: usize, yes: u8| match b[i] {
            c if c == yes => Some(true),
            b'-' => Some(false),
            _ => None,
        };
        let shared = match b[3] {
            b's' => true,
            b'p' => false,
            _ => return None,
        };
        Some(Perms {
            read: flag(0, b'r')?,
            write: flag(1, b'w')?,
            exec: flag(2, b'x')?,
            shared,
        })
    }
}

impl fmt::Display for Perms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = |on: bool, ch: char| if on { ch } else { '-' };
        write!(
            f,
            "{}{}{}{}",
            c(self.read, 'r'),
            c(self.write, 'w'),
            c(self.exec, 'x'),
            if self.shared { 's' } else { 'p' }
        )
    }
}

/// One line of `/proc/PID/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First address of the mapping.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    /// Its protections.
    pub perms: Perms,
    /// File offset of `start`.
    pub offset: u64,
    /// Device as `(major, minor)`, as the kernel prints it (hex).
    pub dev: (u32, u32),
    /// Inode of the mapped file; 0 for anonymous memory and pseudo-mappings.
    pub inode: u64,
    /// The path (spaces kept, without a ` (deleted)` suffix), a pseudo-name such as
    /// `[heap]`, or `None` for anonymous memory.
    pub path: Option<String>,
    /// The file was deleted or replaced on disk after it was mapped.
    pub deleted: bool,
}

impl Mapping {
    /// Parses one line; `None` when it is not a maps line.
    pub fn parse_line(line: &str) -> Option<Mapping> {
        let mut rest = line;
        let mut field = || {
            let r = rest.trim_start_matches(' ');
            let end = r.find(' ').unwrap_or(r.len());
            let (f, tail) = r.split_at(end);
            rest = tail;
            f
        };
        let range = field();
        let perms = Perms::parse(field())?;
        let offset = u64::from_str_radix(field(), 16).ok()?;
        let dev = field();
        let inode: u64 = field().parse().ok()?;
        let (start, end) = range.split_once('-')?;
        let start = u64::from_str_radix(start, 16).ok()?;
        let end = u64::from_str_radix(end, 16).ok()?;
        let (major, minor) = dev.split_once(':')?;
        let dev = (
            u32::from_str_radix(major, 16).ok()?,
            u32::from_str_radix(minor, 16).ok()?,
        );
        // Only the padding goes: a path's own trailing spaces are part of it.
        let path = rest.trim_start_matches(' ').trim_end_matches(['\n', '\r']);
        let (path, deleted) = match path.strip_suffix(" (deleted)") {
            Some(p) => (p, true),
            None => (path, false),
        };
        Some(Mapping {
            start,
            end,
            perms,
            offset,
            dev,
            inode,
            path: (!path.is_empty()).then(|| path.to_string()),
            deleted,
        })
    }

    /// Whether this maps a file (not `[heap]`, `[stack]`, `[vdso]` or anonymous memory).
    pub fn is_file(&self) -> bool {
        self.inode != 0 && self.path.as_deref().is_some_and(|p| p.starts_with('/'))
    }

    /// Whether `addr` lies inside the mapping.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }
}

/// Parses the text of `/proc/PID/maps`, skipping lines that do not parse.
pub fn parse(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(Mapping::parse_line).collect()
}

/// Reads and parses `/proc/PID/maps`.
pub fn read(pid: i32) -> io::Result<Vec<Mapping>> {
    Ok(parse(&std::fs::read_to_string(format!(
        "/proc/{pid}/maps"
    ))?))
}

/// Reads and parses `/proc/self/maps`.
pub fn read_self() -> io::Result<Vec<Mapping>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/maps")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567                    /usr/bin/my prog
7f1c2a600000-7f1c2a628000 r-xp 00028000 08:02 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c2a800000-7f1c2a801000 rw-p 00000000 00:00 0 
7ffd5a1e0000-7ffd5a201000 rw-p 00000000 00:00 0                          [stack]
7f00-7f01 r-xp 00001000 00:1f 42 /tmp/lib.so (deleted)
55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]
7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0                          [vdso]
7f2000000000-7f2000001000 rw-s 00000000 00:05 7                          /dev/dri/card 0 (deleted)
7f3000000000-7f3000001000 r-xp 00002000 103:02 555                       /opt/My App/lib/lib gl.so
";

    #[test]
    fn path_with_spaces_keeps_every_word() {
        let m = parse(MAPS);
        assert_eq!(m.len(), 9);
        assert_eq!(m[0].path.as_deref(), Some("/usr/bin/my prog"));
        assert_eq!(m[8].path.as_deref(), Some("/opt/My App/lib/lib gl.so"));
        assert_eq!(m[8].dev, (0x103, 2));
        assert_eq!(m[8].offset, 0x2000);
        assert!(m[8].perms.exec && m[8].is_file());
    }

    #[test]
    fn fields() {
        let m = parse(MAPS);
        assert_eq!(m[0].dev, (0xfd, 1));
        assert_eq!(m[0].inode, 1234567);
        assert_eq!(m[1].start, 0x7f1c2a600000);
        assert_eq!(m[1].end, 0x7f1c2a628000);
        assert_eq!(m[1].offset, 0x28000);
        assert_eq!(m[1].perms.to_string(), "r-xp");
        assert!(m[1].contains(0x7f1c2a600000) && !m[1].contains(0x7f1c2a628000));
        assert!(m[1].is_file());
    }

    #[test]
    fn anonymous_and_pseudo_mappings() {
        let m = parse(MAPS);
        assert_eq!(m[2].path, None);
        assert!(!m[2].is_file());
        assert_eq!(m[3].path.as_deref(), Some("[stack]"));
        assert_eq!(m[5].path.as_deref(), Some("[heap]"));
        assert_eq!(m[6].path.as_deref(), Some("[vdso]"));
        assert!(!m[3].is_file() && !m[5].is_file() && !m[6].is_file());
        assert!(m[6].perms.exec && !m[6].perms.write);
    }

    #[test]
    fn deleted_suffix_is_stripped_and_flagged() {
        let m = parse(MAPS);
        assert!(m[4].deleted);
        assert_eq!(m[4].path.as_deref(), Some("/tmp/lib.so"));
        assert!(m[7].deleted);
        assert_eq!(m[7].path.as_deref(), Some("/dev/dri/card 0"));
        assert!(m[7].perms.shared && m[7].perms.to_string() == "rw-s");
        assert!(!m[1].deleted);
    }

    #[test]
    fn garbage_lines_are_skipped() {
        assert!(Mapping::parse_line("").is_none());
        assert!(Mapping::parse_line("hello world").is_none());
        assert!(Mapping::parse_line("7f00-7f01 rwzp 0 00:00 0").is_none());
        assert!(Mapping::parse_line("7f00-7f01 r-xp 0 0000 0").is_none());
        assert!(Mapping::parse_line("7f00 r-xp 0 00:00 0").is_none());
        assert_eq!(parse("junk\n7f00-7f01 r--p 0 00:00 0\n").len(), 1);
    }

    #[test]
    fn reads_own_maps() {
        let maps = read_self().unwrap();
        let here = reads_own_maps as *const () as usize as u64;
        let m = maps.iter().find(|m| m.contains(here)).unwrap();
        assert!(m.perms.exec && m.is_file());
    }
}
