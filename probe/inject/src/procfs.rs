//! What the injector reads from /proc: the target's mappings (parsed by `gpuheat-procmaps`,
//! the one /proc/PID/maps parser), status, threads and memory, and the Yama setting.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;

/// One line of /proc/PID/maps: the one parser, shared with the agent.
pub(crate) use gpuheat_procmaps::Mapping;

pub(crate) fn read_maps(pid: i32) -> io::Result<Vec<Mapping>> {
    gpuheat_procmaps::read(pid)
}

/// The fields of /proc/PID/status the injector uses.
#[derive(Clone, Debug, Default)]
pub(crate) struct Status {
    pub name: String,
    pub tgid: i32,
    /// Real, effective, saved uid.
    pub uids: [u32; 3],
    pub tracer_pid: i32,
    /// `Seccomp:` 0 none, 1 strict, 2 filter.
    pub seccomp: u8,
    /// First letter of `State:`.
    pub state: char,
}

pub(crate) fn parse_status(text: &str) -> Status {
    let mut s = Status::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "Name" => s.name = value.to_string(),
            "Tgid" => s.tgid = value.parse().unwrap_or(0),
            "TracerPid" => s.tracer_pid = value.parse().unwrap_or(0),
            "Seccomp" => s.seccomp = value.parse().unwrap_or(0),
            "State" => s.state = value.chars().next().unwrap_or('?'),
            "Uid" => {
                for (slot, v) in s.uids.iter_mut().zip(value.split_whitespace()) {
                    *slot = v.parse().unwrap_or(u32::MAX);
                }
            }
            _ => {}
        }
    }
    s
}

pub(crate) fn read_status(pid: i32) -> io::Result<Status> {
    Ok(parse_status(&fs::read_to_string(format!(
        "/proc/{pid}/status"
    ))?))
}

pub(crate) fn read_task_status(pid: i32, tid: i32) -> io::Result<Status> {
    Ok(parse_status(&fs::read_to_string(format!(
        "/proc/{pid}/task/{tid}/status"
    ))?))
}

/// The thread ids of `pid`, from /proc/PID/task.
pub(crate) fn task_ids(pid: i32) -> io::Result<Vec<i32>> {
    let mut out: Vec<i32> = fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// The parent pid of `pid` (field 4 of /proc/PID/stat).
pub(crate) fn parent_pid(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The value of /proc/sys/kernel/yama/ptrace_scope, `None` without Yama.
pub(crate) fn yama_scope() -> Option<u8> {
    fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether this process has CAP_SYS_PTRACE in its effective set.
pub(crate) fn have_cap_sys_ptrace() -> bool {
    const CAP_SYS_PTRACE: u32 = 19;
    let Ok(text) = fs::read_to_string("/proc/self/status") else {
        return false;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_PTRACE) != 0)
}

/// The target's memory through /proc/PID/mem (needs ptrace access; we are its tracer).
pub(crate) struct Memory {
    file: fs::File,
}

impl Memory {
    pub fn open(pid: i32) -> io::Result<Self> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"))?;
        Ok(Memory { file })
    }

    pub fn write(&self, addr: u64, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all_at(bytes, addr)
    }

    pub fn read(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, addr)
    }

    /// Reads a NUL-terminated string of at most `max` bytes (lossy UTF-8).
    pub fn read_c_string(&self, addr: u64, max: usize) -> io::Result<String> {
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        while out.len() < max {
            // Never read across a page boundary in one go: the string may end just before
            // an unmapped page.
            let a = addr + out.len() as u64;
            let to_page_end = (4096 - (a % 4096)) as usize;
            let n = chunk.len().min(to_page_end);
            self.read(a, &mut chunk[..n])?;
            if let Some(nul) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            out.extend_from_slice(&chunk[..n]);
        }
        out.truncate(max);
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields() {
        let s = parse_status(
            "Name:\tover draw\nState:\tS (sleeping)\nTgid:\t77\nTracerPid:\t12\nUid:\t1000\t1000\t1000\t1000\nSeccomp:\t2\n",
        );
        assert_eq!(s.name, "over draw");
        assert_eq!(s.state, 'S');
        assert_eq!(s.tgid, 77);
        assert_eq!(s.tracer_pid, 12);
        assert_eq!(s.uids, [1000, 1000, 1000]);
        assert_eq!(s.seccomp, 2);
    }
}
