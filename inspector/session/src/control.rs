//! The control contract between the `gpuheat` CLI and the agent it loads into a program,
//! defined once and linked by both sides:
//!
//! - attach mode: the injector calls [`ATTACH_ENTRY`] with an [`AttachArg`]; it returns an
//!   [`AttachStatus`] code; the agent connects back to the socket and the CLI sends
//!   [`Command`] lines on it;
//! - launch mode: the CLI preloads the agent and passes a [`LaunchRequest`] in the
//!   environment ([`env`] names the variables).
//!
//! Records flow the other way, as session chunks (see [`crate::chunk`]).

use crate::model::CaptureMode;
use std::fmt;

/// Version both sides must agree on: the workspace version, which the session crate shares
/// with the agent and the CLI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The agent's exported function the injector calls in attach mode:
/// `int gpuheat_agent_attach(const char *arg)`, `arg` an [`AttachArg`].
pub const ATTACH_ENTRY: &str = "gpuheat_agent_attach";

/// The word naming a capture mode on the control line and in [`env::MODE`].
pub fn mode_word(mode: CaptureMode) -> &'static str {
    match mode {
        CaptureMode::Timeline => "timeline",
        CaptureMode::Full => "full",
    }
}

/// The mode a word names (see [`mode_word`]).
pub fn parse_mode(word: &str) -> Option<CaptureMode> {
    match word {
        "timeline" => Some(CaptureMode::Timeline),
        "full" => Some(CaptureMode::Full),
        _ => None,
    }
}

/// How full mode times a work call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timing {
    /// Deferred where the renderer's timestamps bracket a call's own work (an immediate-mode
    /// GPU), isolated elsewhere (software rasterizers, tile-based GPUs).
    #[default]
    Auto,
    /// The pipeline is finished before and after each work call and the wall time between
    /// taken: exact everywhere, one CPU wait for the GPU per call.
    Isolated,
    /// A timestamp pair and the counting queries around each call, read once at the frame's
    /// end: no wait per call. Where the renderer defers its work (llvmpipe) the pair does not
    /// measure the call's cost; the counts stay exact.
    Deferred,
}

/// The word naming a timing on the control line and in [`env::TIMING`] (`auto` is written as
/// nothing on the control line).
pub fn timing_word(timing: Timing) -> &'static str {
    match timing {
        Timing::Auto => "auto",
        Timing::Isolated => "isolated",
        Timing::Deferred => "deferred",
    }
}

/// The timing a word names (see [`timing_word`]).
pub fn parse_timing(word: &str) -> Option<Timing> {
    match word {
        "auto" => Some(Timing::Auto),
        "isolated" => Some(Timing::Isolated),
        "deferred" => Some(Timing::Deferred),
        _ => None,
    }
}

/// What a trigger watches in each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerMetric {
    /// `frame-ms`: the frame's wall time, from the swap before it returned to its own swap
    /// returned (known at its swap).
    FrameMs,
    /// `gpu-ms`: the GPU time of the frame's work calls, the sum of their pipelined times
    /// (known when the frame's timestamps land, usually one to three frames later).
    GpuMs,
}

impl TriggerMetric {
    /// The word naming it in a rule.
    pub fn word(self) -> &'static str {
        match self {
            TriggerMetric::FrameMs => "frame-ms",
            TriggerMetric::GpuMs => "gpu-ms",
        }
    }

    /// Every metric, in the order help texts list them.
    pub const ALL: [TriggerMetric; 2] = [TriggerMetric::FrameMs, TriggerMetric::GpuMs];
}

/// One trigger rule, `METRIC>MS` (for example `frame-ms>20`): a watched frame whose metric
/// exceeds the threshold triggers a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Trigger {
    /// What is compared.
    pub metric: TriggerMetric,
    /// The threshold, in nanoseconds (written in milliseconds).
    pub above_ns: u64,
}

impl Trigger {
    /// Parses `frame-ms>20` or `gpu-ms>12.5` (spaces around `>` allowed); `None` for anything
    /// else, a threshold that is not a positive finite number of milliseconds included.
    pub fn parse(rule: &str) -> Option<Trigger> {
        let (metric, ms) = rule.split_once('>')?;
        let metric = TriggerMetric::ALL
            .into_iter()
            .find(|m| m.word() == metric.trim())?;
        let ms: f64 = ms.trim().parse().ok()?;
        if !(ms.is_finite() && ms > 0.0 && ms < 3.6e6) {
            return None;
        }
        Some(Trigger {
            metric,
            above_ns: (ms * 1e6).round() as u64,
        })
    }

    /// Whether a frame whose metric measured `ns` triggers.
    pub fn fires(&self, ns: u64) -> bool {
        ns > self.above_ns
    }
}

impl fmt::Display for Trigger {
    /// `frame-ms>20`, as [`Trigger::parse`] reads it (no spaces: one word on the control line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.above_ns / 1_000_000;
        let part = self.above_ns % 1_000_000;
        write!(f, "{}>{whole}", self.metric.word())?;
        if part != 0 {
            let digits = format!("{part:06}");
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// Most rules one watch takes.
pub const MAX_TRIGGERS: usize = 4;

/// A watch: timeline frames kept in a ring, each checked against the rules; a frame that
/// triggers is kept with the ring's frames before it, the next frames are captured in full
/// mode, and the watch goes on (see [`Command::Watch`]). With a ring of 0 frames nothing is
/// held: every frame is sent as it ends (the live view's stream), and a `capture` command
/// takes the next frames in full mode without stopping it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// Watched frames kept before a triggering one; 0: every frame is sent (a stream).
    pub ring: u32,
    /// Frames captured in full mode after each trigger (at least 1).
    pub frames: u32,
    /// Triggers after which the watch ends (at least 1).
    pub max_triggers: u32,
    /// Paint the full-mode frames' heat maps.
    pub heat: bool,
    /// How the full-mode frames time work calls.
    pub timing: Timing,
    /// The rules, up to [`MAX_TRIGGERS`]; any one firing triggers (none: only `capture`
    /// commands take full-mode frames).
    pub rules: Vec<Trigger>,
}

/// What the CLI sends the agent, one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `capture FRAMES timeline|full [heat] [isolated|deferred]`: capture from the next frame
    /// on; `heat` (full mode only) paints each captured frame's heat map; the last word (full
    /// mode only) chooses how work calls are timed, [`Timing::Auto`] without it.
    Capture {
        /// Frames to capture (at least 1).
        frames: u32,
        /// How much to measure.
        mode: CaptureMode,
        /// Paint heat maps (full mode only).
        heat: bool,
        /// How work calls are timed (full mode only).
        timing: Timing,
    },
    /// `watch RING FRAMES MAX [heat] [isolated|deferred] [RULE...]`: watch every frame in
    /// timeline mode from the next one on (see [`Watch`]), until `MAX` triggers have had their
    /// frames captured, or `stop`. A `capture N full …` sent during a watch takes the next N
    /// frames in full mode (a trigger of its own, rule `capture`), and the watch goes on.
    Watch(Watch),
    /// `stop`: end the capture at the end of the current frame.
    Stop,
    /// `detach`: stop, send what is queued, close the connection, go dormant (the hooks stay
    /// in place and pass calls straight through).
    Detach,
}

impl Command {
    /// Parses one line (without its newline); `None` for anything that is not a valid
    /// command, including `capture 0 …`, and `heat` or a timing with the timeline mode.
    pub fn parse(line: &str) -> Option<Command> {
        let mut words = line.split_whitespace().peekable();
        let command = match words.next()? {
            "capture" => {
                let frames = words.next()?.parse().ok().filter(|&n| n > 0)?;
                let mode = parse_mode(words.next()?)?;
                let full = mode == CaptureMode::Full;
                let heat = full && words.next_if_eq(&"heat").is_some();
                let timing = match words.next_if(|w| *w == "isolated" || *w == "deferred") {
                    Some(w) if full => parse_timing(w)?,
                    Some(_) => return None,
                    None => Timing::Auto,
                };
                Command::Capture {
                    frames,
                    mode,
                    heat,
                    timing,
                }
            }
            "watch" => {
                let ring = words.next()?.parse().ok()?;
                let mut count = || words.next()?.parse().ok().filter(|&n: &u32| n > 0);
                let (frames, max_triggers) = (count()?, count()?);
                let heat = words.next_if_eq(&"heat").is_some();
                let timing = words
                    .next_if(|w| *w == "isolated" || *w == "deferred")
                    .and_then(parse_timing)
                    .unwrap_or_default();
                let rules = words
                    .by_ref()
                    .map(Trigger::parse)
                    .collect::<Option<Vec<_>>>()?;
                if rules.len() > MAX_TRIGGERS {
                    return None;
                }
                Command::Watch(Watch {
                    ring,
                    frames,
                    max_triggers,
                    heat,
                    timing,
                    rules,
                })
            }
            "stop" => Command::Stop,
            "detach" => Command::Detach,
            _ => return None,
        };
        words.next().is_none().then_some(command)
    }

    /// The line to send, newline included.
    pub fn line(&self) -> String {
        format!("{self}\n")
    }
}

impl fmt::Display for Command {
    /// The command without its newline, as [`Command::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Capture {
                frames,
                mode,
                heat,
                timing,
            } => {
                write!(f, "capture {frames} {}", mode_word(*mode))?;
                if *heat {
                    f.write_str(" heat")?;
                }
                if *timing != Timing::Auto {
                    write!(f, " {}", timing_word(*timing))?;
                }
                Ok(())
            }
            Command::Watch(w) => {
                write!(f, "watch {} {} {}", w.ring, w.frames, w.max_triggers)?;
                if w.heat {
                    f.write_str(" heat")?;
                }
                if w.timing != Timing::Auto {
                    write!(f, " {}", timing_word(w.timing))?;
                }
                for rule in &w.rules {
                    write!(f, " {rule}")?;
                }
                Ok(())
            }
            Command::Stop => f.write_str("stop"),
            Command::Detach => f.write_str("detach"),
        }
    }
}

/// What [`ATTACH_ENTRY`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum AttachStatus {
    /// The hooks are in, the agent connected back and listens for commands.
    Ok = 0,
    /// The argument was missing or not an [`AttachArg`].
    BadArgument = 1,
    /// The program holds an agent of another version (loaded by an older or newer gpuheat).
    VersionMismatch = 2,
    /// Another gpuheat is connected to this agent.
    AlreadyAttached = 3,
    /// The agent could not connect to the CLI's socket.
    ConnectFailed = 4,
    /// The agent panicked (caught at the FFI boundary).
    Panicked = 5,
}

impl AttachStatus {
    /// The integer the entry point returns.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The status a returned integer stands for; `None` for an unknown code.
    pub fn from_code(code: i32) -> Option<AttachStatus> {
        use AttachStatus::*;
        [
            Ok,
            BadArgument,
            VersionMismatch,
            AlreadyAttached,
            ConnectFailed,
            Panicked,
        ]
        .into_iter()
        .find(|s| s.code() == code)
    }
}

/// The string passed to [`ATTACH_ENTRY`]: `"<socket path>\n<version>[\n<command>]"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachArg {
    /// The CLI's listening socket.
    pub socket: String,
    /// The CLI's [`VERSION`].
    pub version: String,
    /// The first command the CLI will send once connected ([`Command::Capture`] or
    /// [`Command::Watch`]), so the agent can start the capture's warm-up with the frame
    /// after the injected swap instead of at a swap after the connection: one frame of the
    /// program sooner. The CLI sends it on the socket all the same; an agent that started
    /// from the argument takes that first one as said.
    pub command: Option<Command>,
}

impl AttachArg {
    /// The argument for this build's version.
    pub fn new(socket: impl Into<String>) -> AttachArg {
        AttachArg {
            socket: socket.into(),
            version: VERSION.to_string(),
            command: None,
        }
    }

    /// The argument with the first command the CLI will send.
    pub fn with_command(self, command: Command) -> AttachArg {
        AttachArg {
            command: Some(command),
            ..self
        }
    }

    /// Parses the argument; `None` when it has no version line, an empty socket, or a
    /// third line that is no command.
    pub fn parse(arg: &str) -> Option<AttachArg> {
        let (socket, rest) = arg.split_once('\n')?;
        let (version, command) = match rest.split_once('\n') {
            Some((version, line)) => (version, Some(Command::parse(line)?)),
            None => (rest, None),
        };
        if socket.is_empty() {
            return None;
        }
        Some(AttachArg {
            socket: socket.to_string(),
            version: version.to_string(),
            command,
        })
    }

    /// Whether the CLI that sent it is this build's version.
    pub fn version_matches(&self) -> bool {
        self.version == VERSION
    }
}

impl fmt::Display for AttachArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.socket, self.version)?;
        match &self.command {
            Some(command) => write!(f, "\n{command}"),
            None => Ok(()),
        }
    }
}

/// Names of the environment variables of the contract.
pub mod env {
    /// Launch mode: the CLI's socket; without it a preloaded agent stays dormant.
    pub const SOCKET: &str = "GPUHEAT_SOCKET";
    /// Launch mode: frames to capture (default 1).
    pub const FRAMES: &str = "GPUHEAT_FRAMES";
    /// Launch mode: frames to let pass before capturing (default 1).
    pub const SKIP: &str = "GPUHEAT_SKIP";
    /// Launch mode: `timeline` or `full` (default full).
    pub const MODE: &str = "GPUHEAT_MODE";
    /// Launch mode: `1` paints heat maps (full mode only).
    pub const HEAT: &str = "GPUHEAT_HEAT";
    /// Launch mode: `auto`, `isolated` or `deferred` (full mode only; default auto).
    pub const TIMING: &str = "GPUHEAT_TIMING";
    /// Read by the agent from the program's environment in both modes: most post-transform
    /// vertices full-mode capture keeps per frame and context; `0` turns geometry off.
    pub const GEOMETRY_VERTICES: &str = "GPUHEAT_GEOMETRY_VERTICES";
    /// Read by the agent from the program's environment: `gpu|cpu` says where the deferred
    /// tally's records are added into the heat maps (default: the GPU on a hardware renderer
    /// whose vertex stage reads storage blocks; `gpuheat_counters::tally::resolves_on_gpu`).
    pub const TALLY_RESOLVE: &str = "GPUHEAT_TALLY_RESOLVE";
    /// Read by the agent: `glvnd|mesa|off` overrides the live dispatch-table choice.
    pub const LIVE_DISPATCH: &str = "GPUHEAT_LIVE_DISPATCH";
    /// Read by the CLI (and the bench): the agent library to load.
    pub const AGENT: &str = "GPUHEAT_AGENT";
}

/// The agent as a Vulkan layer: what its manifest says and how the loader is told to use it.
/// The agent library is the layer's library, so the CLI writes the manifest (naming the
/// library it would preload) and the agent exports the entry the manifest names.
pub mod vulkan {
    /// The layer's name (`VK_INSTANCE_LAYERS`, `VK_LOADER_LAYERS_ENABLE`).
    pub const LAYER_NAME: &str = "VK_LAYER_GPUHEAT_capture";
    /// The manifest's file name.
    pub const MANIFEST_FILE: &str = "VkLayer_gpuheat.json";
    /// The agent's exported negotiation entry, named in the manifest (a name of its own, so
    /// that preloading the agent for GL never puts a `vk*` symbol in the program's scope).
    pub const NEGOTIATE: &str = "gpuheat_vkNegotiateLoaderLayerInterfaceVersion";
    /// The oldest Vulkan loader that reads `VK_ADD_LAYER_PATH` (1.3.234); older ones are
    /// given the manifest's folder in `VK_LAYER_PATH` instead.
    pub const ADD_LAYER_PATH_SINCE: (u32, u32, u32) = (1, 3, 234);

    /// The folder where `gpuheat attach` wakes a dormant layer of user `uid` (`/tmp`, not
    /// `$TMPDIR`: the program's and the CLI's may differ). Made by the CLI with mode 0700; the
    /// layer trusts it only when it is the user's own and closed to others.
    pub fn wake_dir(uid: u32) -> std::path::PathBuf {
        format!("/tmp/gpuheat-wake-{uid}").into()
    }

    /// The wake-up of process `pid`: a file holding the attach argument
    /// (`control::AttachArg`) that the layer, at its next present, reads, removes, and acts
    /// on as the injected attach entry would.
    pub fn wake_file(uid: u32, pid: i32) -> std::path::PathBuf {
        wake_dir(uid).join(pid.to_string())
    }

    /// Where the layer answers a wake-up: the `control::AttachStatus` code and the thread that
    /// presented, as text (`0 1234`).
    pub fn wake_status_file(uid: u32, pid: i32) -> std::path::PathBuf {
        wake_dir(uid).join(format!("{pid}.status"))
    }

    /// How often a dormant layer looks for its wake-up (at a present, at most this often).
    pub const WAKE_CHECK_MS: u64 = 100;

    /// The manifest of the layer whose library is `library` (an absolute path).
    pub fn manifest(library: &str) -> String {
        let library = library.replace('\\', "\\\\").replace('"', "\\\"");
        format!(
            r#"{{
    "file_format_version": "1.1.2",
    "layer": {{
        "name": "{LAYER_NAME}",
        "type": "GLOBAL",
        "library_path": "{library}",
        "api_version": "1.3.0",
        "implementation_version": "1",
        "description": "gpuheat: the calls and per-draw GPU cost of the frames it is asked to capture",
        "functions": {{
            "vkNegotiateLoaderLayerInterfaceVersion": "{NEGOTIATE}"
        }}
    }}
}}
"#
        )
    }

    /// The variables that make a program's Vulkan loader insert the layer whose manifest is
    /// in `dir`, for a loader of version `loader` (`None`: unknown, taken as new).
    pub fn layer_env(dir: &str, loader: Option<(u32, u32, u32)>) -> Vec<(String, String)> {
        let path_var = match loader {
            Some(v) if v < ADD_LAYER_PATH_SINCE => "VK_LAYER_PATH",
            _ => "VK_ADD_LAYER_PATH",
        };
        let mut layers = LAYER_NAME.to_string();
        if let Some(old) = std::env::var("VK_INSTANCE_LAYERS")
            .ok()
            .filter(|v| !v.is_empty())
        {
            layers = format!("{layers}:{old}");
        }
        vec![
            (path_var.into(), dir.into()),
            ("VK_INSTANCE_LAYERS".into(), layers),
        ]
    }
}

/// The capture a launch-mode CLI asks a preloaded agent for, through the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRequest {
    /// The CLI's socket.
    pub socket: String,
    /// Frames to capture (at least 1).
    pub frames: u32,
    /// Frames to let pass first.
    pub skip: u32,
    /// How much to measure.
    pub mode: CaptureMode,
    /// Paint heat maps (honoured in full mode only).
    pub heat: bool,
    /// How work calls are timed (full mode only).
    pub timing: Timing,
}

impl LaunchRequest {
    /// The variables to set on the program.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        vec![
            (env::SOCKET, self.socket.clone()),
            (env::FRAMES, self.frames.to_string()),
            (env::SKIP, self.skip.to_string()),
            (env::MODE, mode_word(self.mode).to_string()),
            (env::HEAT, if self.heat { "1" } else { "0" }.to_string()),
            (env::TIMING, timing_word(self.timing).to_string()),
        ]
    }

    /// Reads the request through `var` (e.g. `|k| std::env::var(k).ok()`); `None` without a
    /// socket (the agent was loaded without a CLI to talk to). Missing or bad values take
    /// their defaults.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<LaunchRequest> {
        let socket = var(env::SOCKET).filter(|s| !s.is_empty())?;
        let num = |k: &str, d: u32| var(k).and_then(|v| v.trim().parse().ok()).unwrap_or(d);
        let mode = var(env::MODE)
            .and_then(|m| parse_mode(m.trim()))
            .unwrap_or(CaptureMode::Full);
        Some(LaunchRequest {
            socket,
            frames: num(env::FRAMES, 1).max(1),
            skip: num(env::SKIP, 1),
            mode,
            heat: var(env::HEAT).as_deref() == Some("1"),
            timing: var(env::TIMING)
                .and_then(|t| parse_timing(t.trim()))
                .unwrap_or_default(),
        })
    }

    /// Reads the request from this process's environment.
    pub fn from_process_env() -> Option<LaunchRequest> {
        LaunchRequest::from_env(|k| std::env::var(k).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn commands_parse() {
        assert_eq!(
            Command::parse("capture 10 full"),
            Some(Command::Capture {
                frames: 10,
                mode: CaptureMode::Full,
                heat: false,
                timing: Timing::Auto,
            })
        );
        assert_eq!(
            Command::parse("capture 2 full heat"),
            Some(Command::Capture {
                frames: 2,
                mode: CaptureMode::Full,
                heat: true,
                timing: Timing::Auto,
            })
        );
        assert_eq!(
            Command::parse("  capture 1 timeline "),
            Some(Command::Capture {
                frames: 1,
                mode: CaptureMode::Timeline,
                heat: false,
                timing: Timing::Auto,
            })
        );
        assert_eq!(Command::parse("stop"), Some(Command::Stop));
        assert_eq!(Command::parse("detach"), Some(Command::Detach));
    }

    #[test]
    fn bad_commands_are_rejected() {
        for bad in [
            "",
            "capture",
            "capture 2",
            "capture 2 timeline heat",
            "capture 2 full heat x",
            "capture 2 timeline isolated",
            "capture 2 full deferred heat",
            "capture 2 full isolated deferred",
            "capture 2 full fast",
            "capture 0 full",
            "capture -1 full",
            "capture 3 fast",
            "stop now",
            "detach 1",
            "watch",
            "watch 30 3",
            "watch -1 3 1 frame-ms>20",
            "watch 30 0 1 frame-ms>20",
            "watch 30 3 0 frame-ms>20",
            "watch 30 3 1 frame-ms<20",
            "watch 30 3 1 fps>20",
            "watch 30 3 1 frame-ms>0",
            "watch 30 3 1 frame-ms>-4",
            "watch 30 3 1 frame-ms>nan",
            "watch 30 3 1 frame-ms>20 heat",
            "watch 30 3 1 gpu-ms>1 gpu-ms>2 gpu-ms>3 gpu-ms>4 gpu-ms>5",
            "hello",
        ] {
            assert_eq!(Command::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn commands_round_trip() {
        for c in [
            Command::Capture {
                frames: 3,
                mode: CaptureMode::Timeline,
                heat: false,
                timing: Timing::Auto,
            },
            Command::Capture {
                frames: 7,
                mode: CaptureMode::Full,
                heat: true,
                timing: Timing::Auto,
            },
            Command::Capture {
                frames: 2,
                mode: CaptureMode::Full,
                heat: false,
                timing: Timing::Deferred,
            },
            Command::Capture {
                frames: 2,
                mode: CaptureMode::Full,
                heat: true,
                timing: Timing::Isolated,
            },
            Command::Watch(Watch {
                ring: 30,
                frames: 3,
                max_triggers: 2,
                heat: true,
                timing: Timing::Deferred,
                rules: vec![
                    Trigger::parse("frame-ms>20").unwrap(),
                    Trigger::parse("gpu-ms>12.25").unwrap(),
                ],
            }),
            Command::Watch(Watch {
                ring: 0,
                frames: 2,
                max_triggers: 1,
                heat: false,
                timing: Timing::Auto,
                rules: vec![],
            }),
            Command::Stop,
            Command::Detach,
        ] {
            let line = c.line();
            assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
            assert_eq!(Command::parse(line.trim_end()), Some(c.clone()));
        }
        assert_eq!(
            Command::Capture {
                frames: 7,
                mode: CaptureMode::Full,
                heat: true,
                timing: Timing::Auto,
            }
            .to_string(),
            "capture 7 full heat"
        );
    }

    #[test]
    fn trigger_rules_read_and_write_in_milliseconds() {
        let t = Trigger::parse("frame-ms > 16.7").unwrap();
        assert_eq!(t.metric, TriggerMetric::FrameMs);
        assert_eq!(t.above_ns, 16_700_000);
        assert_eq!(t.to_string(), "frame-ms>16.7");
        assert_eq!(
            Trigger::parse("gpu-ms>12").unwrap().to_string(),
            "gpu-ms>12"
        );
        assert_eq!(
            Trigger::parse("gpu-ms>0.000125").unwrap().to_string(),
            "gpu-ms>0.000125"
        );
        // Strictly above: a frame of exactly the threshold is steady.
        assert!(!t.fires(16_700_000));
        assert!(t.fires(16_700_001));
        for bad in [
            "frame-ms",
            "frame-ms>",
            ">3",
            "frame-ms>inf",
            "frame-ms>1e9",
            "cpu-ms>3",
        ] {
            assert_eq!(Trigger::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn attach_status_codes() {
        // The codes cross the process boundary as integers: they never change.
        assert_eq!(AttachStatus::Ok.code(), 0);
        assert_eq!(AttachStatus::BadArgument.code(), 1);
        assert_eq!(AttachStatus::VersionMismatch.code(), 2);
        assert_eq!(AttachStatus::AlreadyAttached.code(), 3);
        assert_eq!(AttachStatus::ConnectFailed.code(), 4);
        assert_eq!(AttachStatus::Panicked.code(), 5);
        for code in 0..6 {
            assert_eq!(AttachStatus::from_code(code).unwrap().code(), code);
        }
        assert_eq!(AttachStatus::from_code(6), None);
        assert_eq!(AttachStatus::from_code(-1), None);
    }

    #[test]
    fn attach_arg_round_trips() {
        let a = AttachArg::new("/tmp/gpuheat dir/sock");
        let s = a.to_string();
        assert_eq!(s, format!("/tmp/gpuheat dir/sock\n{VERSION}"));
        let back = AttachArg::parse(&s).unwrap();
        assert_eq!(back, a);
        assert!(back.version_matches());
        assert!(!AttachArg::parse("/s\n0.0.0-other")
            .unwrap()
            .version_matches());
        assert_eq!(AttachArg::parse("/s"), None);
        assert_eq!(AttachArg::parse("\n1.0"), None);
        assert_eq!(AttachArg::parse("/s\n1\n2"), None);
        assert_eq!(AttachArg::parse("/s\n1\ncapture 3 full\nmore"), None);
        // With the first command: the capture, or a watch with its rules.
        let capture = Command::Capture {
            frames: 3,
            mode: CaptureMode::Full,
            heat: true,
            timing: Timing::Deferred,
        };
        let watch = Command::Watch(Watch {
            ring: 30,
            frames: 2,
            max_triggers: 1,
            heat: false,
            timing: Timing::Auto,
            rules: vec![Trigger::parse("frame-ms>20").unwrap()],
        });
        for command in [capture, watch] {
            let a = AttachArg::new("/s").with_command(command.clone());
            let back = AttachArg::parse(&a.to_string()).unwrap();
            assert_eq!(back.command, Some(command));
            assert_eq!(back, a);
        }
    }

    #[test]
    fn launch_request_round_trips_through_the_environment() {
        let r = LaunchRequest {
            socket: "/run/x.sock".into(),
            frames: 4,
            skip: 0,
            mode: CaptureMode::Timeline,
            heat: false,
            timing: Timing::Deferred,
        };
        let vars: HashMap<&str, String> = r.to_env().into_iter().collect();
        assert_eq!(vars[env::MODE], "timeline");
        let back = LaunchRequest::from_env(|k| vars.get(k).cloned()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn launch_request_defaults() {
        assert_eq!(LaunchRequest::from_env(|_| None), None);
        let only_socket = |k: &str| (k == env::SOCKET).then(|| "/s".to_string());
        let r = LaunchRequest::from_env(only_socket).unwrap();
        assert_eq!(
            (r.frames, r.skip, r.mode, r.heat),
            (1, 1, CaptureMode::Full, false)
        );
        let bad = |k: &str| match k {
            env::SOCKET => Some("/s".to_string()),
            env::FRAMES => Some("0".to_string()),
            env::SKIP => Some("x".to_string()),
            env::MODE => Some("fast".to_string()),
            env::HEAT => Some("yes".to_string()),
            _ => None,
        };
        let r = LaunchRequest::from_env(bad).unwrap();
        assert_eq!(
            (r.frames, r.skip, r.mode, r.heat),
            (1, 1, CaptureMode::Full, false)
        );
        let empty = |k: &str| (k == env::SOCKET).then(String::new);
        assert_eq!(LaunchRequest::from_env(empty), None);
    }
}
