//! The ptrace session: attach to every thread, plant and lift the safe-point breakpoints,
//! run calls on the hijacked thread, and put everything back.
//!
//! Waits are per thread (`waitpid(tid, WNOHANG | __WALL)` polled against a deadline), never
//! `waitpid(-1)` (which would reap unrelated children of the host) and never blocking.
//! Statuses are decoded by hand and signals handled as raw numbers: nix's `WaitStatus`
//! cannot represent real-time signals and would lose such a signal after reaping its stop,
//! so `waitpid`, `PTRACE_CONT`, `PTRACE_LISTEN` and `PTRACE_DETACH` go through libc.
//!
//! Every thread is in one of three states: `Running` (resumed, may report a stop),
//! `Stopped` (in a ptrace-stop; `sig` is a signal that must still be delivered when it is
//! resumed or detached, `group` marks a group-stop that must stay stopped), `Gone`.
//! Whatever happens, [`Session::finish`] (also run by `Drop`) stops all threads, lifts
//! the breakpoints, restores the hijacked thread's registers and detaches every thread.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::ptrace::{self, Options};
use nix::unistd::Pid;

use crate::arch;
use crate::procfs::{self, Memory};
use crate::target;
use crate::{InjectError, Symbol};

/// How long stopping all threads may take (attach and teardown).
pub(crate) const STOP_BOUND: Duration = Duration::from_secs(2);

const SYS_SECCOMP: i32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    Stopped { sig: i32, group: bool },
    Gone,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// An event stop, interrupt stop or group-stop (nothing to deliver).
    Stopped(i32),
    /// A signal-delivery-stop; the signal is kept as the thread's pending signal.
    Signal {
        tid: i32,
        sig: i32,
        code: i32,
        addr: u64,
        syscall: i32,
    },
    /// The thread trapped on one of our breakpoints; its pc is already rewound to the
    /// breakpoint address, nothing is pending.
    Breakpoint {
        tid: i32,
        index: usize,
    },
    Gone(i32),
    Exec(i32),
}

impl Event {
    fn tid(&self) -> i32 {
        match *self {
            Event::Stopped(t) | Event::Gone(t) | Event::Exec(t) => t,
            Event::Signal { tid, .. } | Event::Breakpoint { tid, .. } => tid,
        }
    }
}

struct Breakpoint {
    addr: u64,
    name: String,
    original: u8,
    installed: bool,
}

struct Hijack {
    tid: i32,
    saved: arch::Saved,
}

/// The thread that stopped at a safe point.
pub(crate) struct SafePointHit {
    pub tid: i32,
    pub name: String,
    pub at: Instant,
}

/// Polling interval bounds: start fine (the render thread may be held), back off to 1 ms.
const POLL_MIN: Duration = Duration::from_micros(20);
const POLL_MAX: Duration = Duration::from_millis(1);

pub(crate) struct Session {
    pid: i32,
    threads: BTreeMap<i32, State>,
    breakpoints: Vec<Breakpoint>,
    hijacked: Option<Hijack>,
    mem: Option<Memory>,
    exited: bool,
    exec: bool,
    finished: bool,
    /// Threads left in their group-stop (resumed with PTRACE_LISTEN, no event since): the
    /// program was stopped (SIGSTOP, Ctrl-Z) and stays so.
    listening: BTreeSet<i32>,
    /// ptrace requests must come from the thread that attached.
    _not_send: PhantomData<*const ()>,
}

fn ptrace_err(op: &'static str, tid: i32) -> impl FnOnce(Errno) -> InjectError {
    move |errno| InjectError::Ptrace { op, tid, errno }
}

fn raw_ptrace(request: libc::c_uint, tid: i32, sig: i32) -> Result<(), Errno> {
    // SAFETY: CONT/LISTEN/DETACH take no pointers; `data` is a signal number.
    let r = unsafe {
        libc::ptrace(
            request,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            sig as usize as *mut libc::c_void,
        )
    };
    Errno::result(r).map(drop)
}

/// `waitpid(tid, WNOHANG | __WALL)`: `Ok(None)` while nothing happened.
fn wait_nohang(tid: i32) -> Result<Option<i32>, Errno> {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let r = unsafe { libc::waitpid(tid, &mut status, libc::WNOHANG | libc::__WALL) };
        match r {
            0 => return Ok(None),
            r if r > 0 => return Ok(Some(status)),
            _ => match Errno::last() {
                Errno::EINTR => continue,
                e => return Err(e),
            },
        }
    }
}

fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// The raw bytes of a siginfo_t, to read union members libc does not expose.
fn siginfo_i32(info: &libc::siginfo_t, offset: usize) -> i32 {
    // SAFETY: siginfo_t is 128 plain bytes; offset + 4 <= 128 for the callers.
    let bytes: &[u8; std::mem::size_of::<libc::siginfo_t>()] =
        unsafe { &*(info as *const libc::siginfo_t).cast() };
    i32::from_ne_bytes([
        bytes[offset],
        bytes[offset + 1],
        bytes[offset + 2],
        bytes[offset + 3],
    ])
}

impl Session {
    pub fn new(pid: i32) -> Self {
        Session {
            pid,
            threads: BTreeMap::new(),
            breakpoints: Vec::new(),
            hijacked: None,
            mem: None,
            exited: false,
            exec: false,
            finished: false,
            listening: BTreeSet::new(),
            _not_send: PhantomData,
        }
    }

    fn exited_error(&self, during: &'static str) -> InjectError {
        InjectError::TargetExited {
            pid: self.pid,
            during,
        }
    }

    fn set(&mut self, tid: i32, state: State) {
        self.threads.insert(tid, state);
    }

    fn state(&self, tid: i32) -> State {
        self.threads.get(&tid).copied().unwrap_or(State::Gone)
    }

    fn running(&self) -> Vec<i32> {
        self.threads
            .iter()
            .filter(|(_, s)| **s == State::Running)
            .map(|(t, _)| *t)
            .collect()
    }

    fn any_stopped(&self) -> Option<i32> {
        let stopped = |t: &i32| matches!(self.state(*t), State::Stopped { .. });
        if stopped(&self.pid) {
            return Some(self.pid);
        }
        self.threads.keys().copied().find(stopped)
    }

    fn memory(&mut self) -> Result<&Memory, InjectError> {
        if self.mem.is_none() {
            let pid = self.pid;
            self.mem = Some(
                Memory::open(pid)
                    .map_err(|e| InjectError::io(format!("opening /proc/{pid}/mem"), e))?,
            );
        }
        Ok(self.mem.as_ref().expect("just opened"))
    }

    // ---------------------------------------------------------------------------------
    // Attaching and stopping
    // ---------------------------------------------------------------------------------

    /// PTRACE_SEIZEs every thread (re-listing /proc/PID/task until no new thread appears)
    /// and leaves all of them stopped. New threads created by traced ones are attached
    /// by the kernel (PTRACE_O_TRACECLONE).
    pub fn attach(&mut self, deadline: Instant) -> Result<(), InjectError> {
        loop {
            let new = self.seize_new_threads()?;
            self.stop_all(deadline)?;
            if !new {
                return Ok(());
            }
        }
    }

    fn seize_new_threads(&mut self) -> Result<bool, InjectError> {
        let tids = match procfs::task_ids(self.pid) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.exited = true;
                return Err(self.exited_error("attach"));
            }
            Err(e) => {
                return Err(InjectError::io(
                    format!("listing /proc/{}/task", self.pid),
                    e,
                ))
            }
        };
        let mut new = false;
        for tid in tids {
            if self.threads.contains_key(&tid) {
                continue;
            }
            // CLONE: new threads are traced too (one that hit a breakpoint untraced would
            // die of SIGTRAP). FORK: a child process inherits our int3 bytes; it is caught
            // to put them back before it runs. EXEC: the breakpoints vanish with the image.
            let options = Options::PTRACE_O_TRACECLONE
                | Options::PTRACE_O_TRACEFORK
                | Options::PTRACE_O_TRACEEXEC;
            match ptrace::seize(Pid::from_raw(tid), options) {
                Ok(()) => {}
                Err(Errno::ESRCH) => continue, // exited meanwhile
                Err(Errno::EPERM) => {
                    // Already ours (attached by the kernel through a clone event we have
                    // not processed yet), or refused.
                    // TracerPid is the tracing thread: this one.
                    let me = nix::unistd::gettid().as_raw();
                    let ours = procfs::read_task_status(self.pid, tid)
                        .map(|s| s.tracer_pid == me)
                        .unwrap_or(false);
                    if !ours {
                        return Err(self.permission_error());
                    }
                }
                Err(e) => return Err(ptrace_err("SEIZE", tid)(e)),
            }
            self.set(tid, State::Running);
            let _ = ptrace::interrupt(Pid::from_raw(tid));
            new = true;
        }
        if self.threads.is_empty() {
            self.exited = true;
            return Err(self.exited_error("attach"));
        }
        Ok(new)
    }

    fn permission_error(&self) -> InjectError {
        match procfs::read_status(self.pid) {
            Ok(s) if s.tracer_pid != 0 => target::already_traced(self.pid, s.tracer_pid),
            Ok(_) => target::not_permitted(self.pid),
            Err(_) => InjectError::NoSuchProcess { pid: self.pid },
        }
    }

    /// Interrupts every running thread and waits until all are stopped (or gone).
    fn stop_all(&mut self, deadline: Instant) -> Result<(), InjectError> {
        let mut interrupted: Vec<i32> = Vec::new();
        let mut poll = POLL_MIN;
        loop {
            for tid in self.running() {
                if !interrupted.contains(&tid) {
                    // ESRCH: it is exiting; waitpid will say so.
                    let _ = ptrace::interrupt(Pid::from_raw(tid));
                    interrupted.push(tid);
                }
            }
            let events = self.poll_round()?;
            if !events.is_empty() {
                poll = POLL_MIN;
            }
            if self.exited {
                return Err(self.exited_error("attach"));
            }
            let running = self.running().len();
            if running == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(InjectError::StopTimeout {
                    pid: self.pid,
                    after: STOP_BOUND,
                    threads: running,
                });
            }
            std::thread::sleep(poll);
            poll = (poll * 2).min(POLL_MAX);
        }
    }

    /// One non-blocking wait on every running thread.
    fn poll_round(&mut self) -> Result<Vec<Event>, InjectError> {
        let mut events = Vec::new();
        for tid in self.running() {
            match wait_nohang(tid) {
                Ok(None) => {}
                Ok(Some(status)) => events.push(self.handle(tid, status)?),
                Err(Errno::ECHILD) => {
                    self.set(tid, State::Gone);
                    if tid == self.pid {
                        self.exited = true;
                    }
                    events.push(Event::Gone(tid));
                }
                Err(e) => return Err(ptrace_err("waitpid", tid)(e)),
            }
        }
        Ok(events)
    }

    /// Records what a wait status means for the thread.
    fn handle(&mut self, tid: i32, status: i32) -> Result<Event, InjectError> {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.set(tid, State::Gone);
            if tid == self.pid {
                self.exited = true;
            }
            return Ok(Event::Gone(tid));
        }
        if !libc::WIFSTOPPED(status) {
            return Ok(Event::Stopped(tid));
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        let stopped = State::Stopped {
            sig: 0,
            group: false,
        };
        match event {
            0 => {}
            e if e == PTRACE_EVENT_STOP => {
                self.set(
                    tid,
                    State::Stopped {
                        sig: 0,
                        group: is_stop_signal(sig),
                    },
                );
                return Ok(Event::Stopped(tid));
            }
            libc::PTRACE_EVENT_CLONE => {
                if let Ok(new) = ptrace::getevent(Pid::from_raw(tid)) {
                    // The kernel attached it; it reports an initial stop by itself.
                    self.threads.entry(new as i32).or_insert(State::Running);
                }
                self.set(tid, stopped);
                return Ok(Event::Stopped(tid));
            }
            libc::PTRACE_EVENT_FORK => {
                if let Ok(child) = ptrace::getevent(Pid::from_raw(tid)) {
                    self.release_fork_child(child as i32);
                }
                self.set(tid, stopped);
                return Ok(Event::Stopped(tid));
            }
            libc::PTRACE_EVENT_EXEC => {
                self.exec = true;
                self.set(tid, stopped);
                return Ok(Event::Exec(tid));
            }
            _ => {
                self.set(tid, stopped);
                return Ok(Event::Stopped(tid));
            }
        }
        // Signal-delivery-stop.
        let info = match ptrace::getsiginfo(Pid::from_raw(tid)) {
            Ok(i) => i,
            Err(Errno::ESRCH) => {
                // Killed (SIGKILL) while stopped: waitpid will report the exit.
                return Ok(Event::Stopped(tid));
            }
            Err(e) => return Err(ptrace_err("GETSIGINFO", tid)(e)),
        };
        if sig == libc::SIGTRAP && arch::is_breakpoint_trap(info.si_code) && !self.exec {
            let mut regs = arch::get_regs(tid).map_err(ptrace_err("GETREGS", tid))?;
            let addr = arch::breakpoint_address_from_trap_pc(arch::pc(&regs));
            if let Some(index) = self.breakpoints.iter().position(|b| b.addr == addr) {
                arch::set_pc(&mut regs, addr);
                arch::set_regs(tid, &regs).map_err(ptrace_err("SETREGS", tid))?;
                self.set(tid, stopped);
                return Ok(Event::Breakpoint { tid, index });
            }
        }
        // SAFETY: si_addr is meaningful for fault signals; for others it is just bytes.
        let addr = unsafe { info.si_addr() } as u64;
        // SIGSYS: si_syscall is the int after the pointer si_call_addr (offset 16 + 8).
        let syscall = if sig == libc::SIGSYS {
            siginfo_i32(&info, 24)
        } else {
            -1
        };
        self.set(tid, State::Stopped { sig, group: false });
        Ok(Event::Signal {
            tid,
            sig,
            code: info.si_code,
            addr,
            syscall,
        })
    }

    /// A child forked while we were attached (auto-attached by the kernel): waits for its
    /// initial stop, puts back the original bytes of any breakpoint in its copy of the
    /// memory, and detaches it. Best effort, bounded.
    fn release_fork_child(&mut self, child: i32) {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match wait_nohang(child) {
                Ok(Some(status)) if libc::WIFSTOPPED(status) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_MIN),
                _ => return,
            }
        }
        for b in &self.breakpoints {
            let addr = b.addr as ptrace::AddressType;
            if let Ok(word) = ptrace::read(Pid::from_raw(child), addr) {
                if (word & 0xff) as u8 == arch::BREAKPOINT {
                    let restored = (word & !0xff) | b.original as libc::c_long;
                    let _ = ptrace::write(Pid::from_raw(child), addr, restored);
                }
            }
        }
        let _ = raw_ptrace(libc::PTRACE_DETACH, child, 0);
    }

    /// Resumes a stopped thread: group-stopped threads with PTRACE_LISTEN (they stay
    /// stopped, as the program was stopped), others with PTRACE_CONT delivering their
    /// pending signal.
    fn resume(&mut self, tid: i32) -> Result<(), InjectError> {
        let State::Stopped { sig, group } = self.state(tid) else {
            return Ok(());
        };
        let r = if group {
            raw_ptrace(libc::PTRACE_LISTEN, tid, 0)
        } else {
            raw_ptrace(libc::PTRACE_CONT, tid, sig)
        };
        match r {
            // ESRCH: killed meanwhile; waitpid reports it.
            Ok(()) | Err(Errno::ESRCH) => {
                self.set(tid, State::Running);
                if group {
                    self.listening.insert(tid);
                } else {
                    self.listening.remove(&tid);
                }
                Ok(())
            }
            Err(e) => Err(ptrace_err(if group { "LISTEN" } else { "CONT" }, tid)(e)),
        }
    }

    fn resume_all_except(&mut self, held: Option<i32>) -> Result<(), InjectError> {
        let stopped: Vec<i32> = self
            .threads
            .iter()
            .filter(|(t, s)| matches!(s, State::Stopped { .. }) && Some(**t) != held)
            .map(|(t, _)| *t)
            .collect();
        for tid in stopped {
            self.resume(tid)?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Breakpoints
    // ---------------------------------------------------------------------------------

    /// Writes `int3` at each safe point (all threads are stopped).
    pub fn install_breakpoints(&mut self, points: &[Symbol]) -> Result<(), InjectError> {
        let via = self
            .any_stopped()
            .ok_or_else(|| self.exited_error("attach"))?;
        for p in points {
            if self.breakpoints.iter().any(|b| b.addr == p.address) {
                continue;
            }
            let addr = p.address as ptrace::AddressType;
            let word =
                ptrace::read(Pid::from_raw(via), addr).map_err(ptrace_err("PEEKTEXT", via))?;
            let original = (word & 0xff) as u8;
            if original == arch::BREAKPOINT {
                // Someone else's breakpoint (or a leftover): not ours to take over.
                continue;
            }
            let patched = (word & !0xff) | arch::BREAKPOINT as libc::c_long;
            ptrace::write(Pid::from_raw(via), addr, patched)
                .map_err(ptrace_err("POKETEXT", via))?;
            self.breakpoints.push(Breakpoint {
                addr: p.address,
                name: p.name.clone(),
                original,
                installed: true,
            });
        }
        if self.breakpoints.is_empty() {
            return Err(InjectError::NoSafePoint {
                pid: self.pid,
                libraries: "its GL libraries (every safe point already carries a breakpoint)"
                    .into(),
            });
        }
        Ok(())
    }

    /// Puts the original bytes back, through the stopped thread `via`. Only the patched
    /// byte is rewritten (read-modify-write of the word), so it is safe while other
    /// threads run.
    fn remove_breakpoints(&mut self, via: i32) -> Result<(), InjectError> {
        let mut first_err = None;
        for b in self.breakpoints.iter_mut().filter(|b| b.installed) {
            let addr = b.addr as ptrace::AddressType;
            let r = ptrace::read(Pid::from_raw(via), addr)
                .map_err(ptrace_err("PEEKTEXT", via))
                .and_then(|word| {
                    let restored = (word & !0xff) | b.original as libc::c_long;
                    ptrace::write(Pid::from_raw(via), addr, restored)
                        .map_err(ptrace_err("POKETEXT", via))
                });
            match r {
                Ok(()) => b.installed = false,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Resumes every thread and waits (until `deadline`) for one to trap on a safe point.
    /// The breakpoints are lifted at once; threads that trapped meanwhile are rewound and
    /// resumed; other signals are delivered. The hit thread stays stopped.
    pub fn wait_for_safe_point(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
    ) -> Result<SafePointHit, InjectError> {
        self.resume_all_except(None)?;
        let mut hit: Option<SafePointHit> = None;
        let mut poll = POLL_MIN;
        loop {
            let events = self.poll_round()?;
            if !events.is_empty() {
                poll = POLL_MIN;
            }
            for ev in events {
                match ev {
                    Event::Breakpoint { tid, index } if hit.is_none() => {
                        let at = Instant::now();
                        self.remove_breakpoints(tid)?;
                        hit = Some(SafePointHit {
                            tid,
                            name: self.breakpoints[index].name.clone(),
                            at,
                        });
                    }
                    Event::Exec(_) => return Err(InjectError::TargetExec { pid: self.pid }),
                    Event::Gone(_) => {
                        if self.exited {
                            return Err(self.exited_error("the wait for a safe point"));
                        }
                    }
                    other => self.resume(other.tid())?,
                }
            }
            if let Some(hit) = hit {
                return Ok(hit);
            }
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(InjectError::Cancelled {
                    pid: self.pid,
                    stopped: !self.listening.is_empty(),
                });
            }
            if Instant::now() >= deadline {
                let mut names: Vec<&str> = self.breakpoints.iter().map(|b| &b.name[..]).collect();
                names.dedup();
                return Err(InjectError::SafePointTimeout {
                    pid: self.pid,
                    safe_points: names.join(" or "),
                    timeout,
                    stopped: !self.listening.is_empty(),
                });
            }
            std::thread::sleep(poll);
            poll = (poll * 2).min(POLL_MAX);
        }
    }

    // ---------------------------------------------------------------------------------
    // Calls on the hijacked thread
    // ---------------------------------------------------------------------------------

    /// Saves the full register state of the (stopped) thread `tid`.
    pub fn hijack(&mut self, tid: i32) -> Result<&arch::Regs, InjectError> {
        let saved = arch::save(tid).map_err(|(op, e)| ptrace_err(op, tid)(e))?;
        self.hijacked = Some(Hijack { tid, saved });
        Ok(&self.hijacked.as_ref().expect("just set").saved.regs)
    }

    /// Writes bytes into the target.
    pub fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<(), InjectError> {
        let pid = self.pid;
        self.memory()?
            .write(addr, bytes)
            .map_err(|e| InjectError::io(format!("writing pid {pid}'s memory at {addr:#x}"), e))
    }

    /// Reads a C string from the target.
    pub fn read_c_string(&mut self, addr: u64) -> Result<String, InjectError> {
        let pid = self.pid;
        self.memory()?
            .read_c_string(addr, 4096)
            .map_err(|e| InjectError::io(format!("reading pid {pid}'s memory at {addr:#x}"), e))
    }

    /// Calls `func(args…)` on the hijacked thread with its frame below `frame_top`, and
    /// returns the integer result. The other threads keep running meanwhile (a stopped
    /// thread could hold a lock the call needs); their events are serviced.
    pub fn call(
        &mut self,
        name: &str,
        func: u64,
        args: &[u64],
        frame_top: u64,
        bound: Duration,
    ) -> Result<u64, InjectError> {
        let deadline = Instant::now() + bound;
        let Some(h) = self.hijacked.as_ref() else {
            return Err(InjectError::InvalidRequest("no hijacked thread".into()));
        };
        let tid = h.tid;
        let setup = arch::prepare_call(&h.saved.regs, func, args, frame_top);
        for (addr, bytes) in &setup.writes {
            self.write_memory(*addr, bytes)?;
        }
        arch::set_regs(tid, &setup.regs).map_err(ptrace_err("SETREGS", tid))?;
        self.set(
            tid,
            State::Stopped {
                sig: 0,
                group: false,
            },
        );
        self.resume(tid)?;
        let mut poll = POLL_MIN;
        loop {
            let events = self.poll_round()?;
            if !events.is_empty() {
                poll = POLL_MIN;
            }
            for ev in events {
                match ev {
                    Event::Signal {
                        tid: t,
                        sig,
                        code,
                        addr,
                        syscall,
                    } if t == tid => {
                        let regs = arch::get_regs(t).map_err(ptrace_err("GETREGS", t))?;
                        let swallow = State::Stopped {
                            sig: 0,
                            group: false,
                        };
                        if arch::is_call_return(sig, &regs) {
                            self.set(t, swallow);
                            return Ok(arch::return_value(&regs));
                        }
                        if sig == libc::SIGSYS && code == SYS_SECCOMP {
                            self.set(t, swallow);
                            return Err(InjectError::Seccomp {
                                pid: self.pid,
                                function: name.into(),
                                syscall,
                            });
                        }
                        let fault = matches!(
                            sig,
                            libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
                        );
                        if fault && code > 0 {
                            self.set(t, swallow);
                            return Err(InjectError::CallCrashed {
                                pid: self.pid,
                                function: name.into(),
                                signal: sig,
                                code,
                                address: addr,
                            });
                        }
                        // An ordinary signal: deliver it (the handler runs on top of our
                        // frame and returns into the call).
                        self.resume(t)?;
                    }
                    Event::Gone(t) => {
                        if t == tid || self.exited {
                            self.exited = self.exited || t == self.pid;
                            return Err(self.exited_error("an injected call"));
                        }
                    }
                    Event::Exec(_) => return Err(InjectError::TargetExec { pid: self.pid }),
                    other => self.resume(other.tid())?,
                }
            }
            if Instant::now() >= deadline {
                return Err(InjectError::CallTimeout {
                    pid: self.pid,
                    function: name.into(),
                    after: bound,
                });
            }
            std::thread::sleep(poll);
            poll = (poll * 2).min(POLL_MAX);
        }
    }

    // ---------------------------------------------------------------------------------
    // Teardown
    // ---------------------------------------------------------------------------------

    /// Stops every thread, lifts the breakpoints, restores the hijacked thread and
    /// detaches every thread (each with the signal it still had to receive). Runs once;
    /// best effort: every step is tried even if an earlier one failed, and the first
    /// error is returned.
    pub fn finish(&mut self) -> Result<(), InjectError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let mut first_err: Option<InjectError> = None;
        let mut note = |r: Result<(), InjectError>| {
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        };
        if !self.exited && !self.threads.is_empty() {
            let deadline = Instant::now() + STOP_BOUND;
            let r = self.stop_all(deadline);
            note(r);
        }
        if !self.exec && self.breakpoints.iter().any(|b| b.installed) {
            if let Some(via) = self.any_stopped() {
                let r = self.remove_breakpoints(via);
                note(r);
            }
        }
        if let Some(h) = self.hijacked.take() {
            if let State::Stopped { group, .. } = self.state(h.tid) {
                if !self.exec {
                    let r =
                        arch::restore(h.tid, &h.saved).map_err(|(op, e)| ptrace_err(op, h.tid)(e));
                    note(r);
                }
                // Whatever the call left pending (its return fault, a crash) is ours.
                self.set(h.tid, State::Stopped { sig: 0, group });
            }
        }
        let threads: Vec<(i32, State)> = self.threads.iter().map(|(t, s)| (*t, *s)).collect();
        for (tid, state) in threads {
            match state {
                State::Stopped { sig, .. } => {
                    match raw_ptrace(libc::PTRACE_DETACH, tid, sig) {
                        Ok(()) | Err(Errno::ESRCH) => {}
                        Err(e) => note(Err(ptrace_err("DETACH", tid)(e))),
                    }
                    self.set(tid, State::Gone);
                }
                State::Running => {
                    // Could not be stopped: it stays traced until it stops or we exit.
                    note(Err(InjectError::StopTimeout {
                        pid: self.pid,
                        after: STOP_BOUND,
                        threads: 1,
                    }));
                }
                State::Gone => {}
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// `PTRACE_EVENT_STOP` (not exported by libc for every target).
const PTRACE_EVENT_STOP: i32 = 128;

impl Drop for Session {
    fn drop(&mut self) {
        // Best effort, never panics: the error (if any) has nowhere to go.
        let _ = self.finish();
    }
}
