//! Hand-rolled command-line parsing shared by the examples.
//!
//! Common flags: `--frames N`, `--fps N`, `--api gles|gl`, `--size WxH`, `--timing`,
//! `--checksum`, `--slow-ms N`, `--report-frame-ms`, `--keep-shaders`, `--help`; each example
//! adds its own unsigned integer flags ([`IntFlag`]). Values may be given as `--flag V` or
//! `--flag=V`. On error, [`parse_or_exit`] prints one line on stderr and exits with status 2;
//! `--help` prints the usage and the expected numbers on stdout and exits 0.

use crate::gfx::Api;

/// An example-specific unsigned integer flag, e.g. `--layers K`.
#[derive(Clone, Copy, Debug)]
pub struct IntFlag {
    /// Flag name without the leading `--`.
    pub name: &'static str,
    /// Placeholder shown in the usage, e.g. `K`.
    pub value: &'static str,
    /// Value when the flag is not given.
    pub default: u32,
    /// Smallest accepted value.
    pub min: u32,
    /// One line for the usage.
    pub help: &'static str,
}

/// Static description of one example program.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Binary name, e.g. `overdraw`.
    pub name: &'static str,
    /// One-line summary.
    pub about: &'static str,
    /// Default `--size`.
    pub default_size: (u32, u32),
    /// The example's own flags, besides the common ones.
    pub flags: &'static [IntFlag],
    /// The expected numbers (per-frame call sequence and counts), printed by `--help`.
    pub expected: &'static str,
}

/// Parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// `--frames N`; `None` = run until killed.
    pub frames: Option<u64>,
    /// `--fps N`: frames are paced to at most N per second (0: unpaced); `None` = the
    /// default, 60 when running until killed, unpaced with `--frames`.
    pub fps: Option<u64>,
    /// `--api gles|gl`.
    pub api: Api,
    /// Surface width from `--size WxH`.
    pub width: u32,
    /// Surface height from `--size WxH`.
    pub height: u32,
    /// `--timing`: a `glFinish` per frame and the median frame time at the end.
    pub timing: bool,
    /// `--checksum`: print the last frame's checksum at the end.
    pub checksum: bool,
    /// `--slow-ms N`: at the end, print the frames that ended more than N ms after the
    /// previous one (the program's own clock, for a test to tell a slow machine from a false
    /// trigger).
    pub slow_ms: Option<u64>,
    /// `--report-frame-ms`: at the end, print every frame's start-to-start period (for a
    /// benchmark's spread); needs `--timing` and `--frames N` with N ≥ 2.
    pub report_frame_ms: bool,
    /// Leave shaders attached to their programs after linking.
    pub keep_shaders: bool,
    values: Vec<(&'static str, u32)>,
}

impl Args {
    /// Value of an example-specific flag (its default when not given).
    ///
    /// Panics if `name` is not one of the [`Spec`]'s flags (a programming error).
    pub fn get(&self, name: &str) -> u32 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no flag --{name} in this example"))
    }
}

/// Result of [`parse`]: either arguments to run with, or a request for the usage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Run with these arguments.
    Run(Args),
    /// `--help`: print the usage.
    Help,
}

/// The usage text, including the expected numbers.
pub fn usage(spec: &Spec) -> String {
    let mut s = format!(
        "{} - {}\n\nUSAGE: {} [OPTIONS]\n\nOPTIONS:\n",
        spec.name, spec.about, spec.name
    );
    let mut line = |flag: String, help: String| {
        s.push_str(&format!("  {flag:<16} {help}\n"));
    };
    line(
        "--frames N".into(),
        "render N frames then exit (default: run until killed)".into(),
    );
    line(
        "--fps N".into(),
        "pace frames to at most N per second, as a display's refresh would (0: flat out; \
         default: 60 when running until killed, flat out with --frames)"
            .into(),
    );
    line(
        "--api gles|gl".into(),
        "GLES 3.2 or GL 4.5 core context (default: gles)".into(),
    );
    line(
        "--size WxH".into(),
        format!(
            "pbuffer size in pixels (default: {}x{})",
            spec.default_size.0, spec.default_size.1
        ),
    );
    line(
        "--timing".into(),
        "glFinish before each eglSwapBuffers; print frame_ms=<median> at exit".into(),
    );
    line(
        "--checksum".into(),
        "after the last frame print checksum=<FNV-1a 64 of the RGBA pixels>".into(),
    );
    line(
        "--slow-ms N".into(),
        "at exit print slow_frames=<indices of the frames whose swap came more than N ms \
         after the previous swap>"
            .into(),
    );
    line(
        "--report-frame-ms".into(),
        "at exit print frame_ms_frames=<start-to-start ms of frames 0..N-2> (needs --timing \
         and --frames N >= 2)"
            .into(),
    );
    line(
        "--keep-shaders".into(),
        "leave shaders attached to their programs after linking (only glDeleteShader, as many \
         programs do; gpuheat attach can then read their sources for geometry)"
            .into(),
    );
    for f in spec.flags {
        line(
            format!("--{} {}", f.name, f.value),
            format!("{} (default: {})", f.help, f.default),
        );
    }
    line("--help".into(), "print this help".into());
    s.push_str("\nEXPECTED NUMBERS:\n");
    for l in spec.expected.trim_end().lines() {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// `v` as the unsigned integer value of `--flag`.
pub fn parse_u64(flag: &str, v: &str) -> Result<u64, String> {
    v.parse::<u64>()
        .map_err(|_| format!("--{flag}: expected an unsigned integer, got {v:?}"))
}

/// `v` as `--size WxH`, each side in `min..=16384`.
pub fn parse_size(v: &str, min: u32) -> Result<(u32, u32), String> {
    let err = || format!("--size: expected WxH (e.g. 256x256), got {v:?}");
    let (w, h) = v.split_once(['x', 'X']).ok_or_else(err)?;
    let w: u32 = w.parse().map_err(|_| err())?;
    let h: u32 = h.parse().map_err(|_| err())?;
    if !(min..=16384).contains(&w) || !(min..=16384).contains(&h) {
        return Err(format!(
            "--size: each side must be in {min}..=16384, got {v:?}"
        ));
    }
    Ok((w, h))
}

/// One `--name` or `--name=value` of a command line, read by [`next_flag`]; its value, when
/// it takes one, is inline or the next argument.
pub struct Flag<'a, I: Iterator<Item = String>> {
    /// The name without the leading `--`.
    pub name: String,
    inline: Option<String>,
    rest: &'a mut I,
}

impl<I: Iterator<Item = String>> Flag<'_, I> {
    /// For a flag that takes no value: `Err` when one was given inline.
    pub fn switch(&self) -> Result<(), String> {
        match self.inline {
            Some(_) => Err(format!("--{} takes no value", self.name)),
            None => Ok(()),
        }
    }

    /// The flag's value: inline, or the next argument.
    pub fn value(&mut self) -> Result<String, String> {
        match self.inline.take() {
            Some(v) => Ok(v),
            None => self
                .rest
                .next()
                .ok_or_else(|| format!("--{} needs a value", self.name)),
        }
    }
}

/// The next flag of `args`; `Err` for an argument that is not one.
pub fn next_flag<I: Iterator<Item = String>>(args: &mut I) -> Option<Result<Flag<'_, I>, String>> {
    let arg = args.next()?;
    let Some(body) = arg.strip_prefix("--") else {
        return Some(Err(format!("unexpected argument {arg:?} (see --help)")));
    };
    let (name, inline) = match body.split_once('=') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (body.to_string(), None),
    };
    Some(Ok(Flag {
        name,
        inline,
        rest: args,
    }))
}

/// Parses `args` (without the program name) against `spec`.
pub fn parse<I, S>(spec: &Spec, args: I) -> Result<Parsed, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = Args {
        frames: None,
        fps: None,
        api: Api::Gles,
        width: spec.default_size.0,
        height: spec.default_size.1,
        timing: false,
        checksum: false,
        slow_ms: None,
        report_frame_ms: false,
        keep_shaders: false,
        values: spec.flags.iter().map(|f| (f.name, f.default)).collect(),
    };
    let mut it = args.into_iter().map(|a| a.as_ref().to_string());
    while let Some(flag) = next_flag(&mut it) {
        let mut flag = flag?;
        match flag.name.as_str() {
            "help" => {
                flag.switch()?;
                return Ok(Parsed::Help);
            }
            "timing" => {
                flag.switch()?;
                out.timing = true;
            }
            "checksum" => {
                flag.switch()?;
                out.checksum = true;
            }
            "keep-shaders" => {
                flag.switch()?;
                out.keep_shaders = true;
            }
            "report-frame-ms" => {
                flag.switch()?;
                out.report_frame_ms = true;
            }
            "frames" => out.frames = Some(parse_u64("frames", &flag.value()?)?),
            "fps" => out.fps = Some(parse_u64("fps", &flag.value()?)?),
            "slow-ms" => out.slow_ms = Some(parse_u64("slow-ms", &flag.value()?)?),
            "api" => {
                let v = flag.value()?;
                out.api = Api::parse(&v)
                    .ok_or_else(|| format!("--api: expected gles or gl, got {v:?}"))?;
            }
            "size" => (out.width, out.height) = parse_size(&flag.value()?, 1)?,
            name => {
                let Some(f) = spec.flags.iter().find(|f| f.name == name) else {
                    return Err(format!("unknown flag --{name} (see --help)"));
                };
                let v = parse_u64(f.name, &flag.value()?)?;
                if v < f.min as u64 || v > u32::MAX as u64 {
                    return Err(format!("--{}: must be at least {}, got {v}", f.name, f.min));
                }
                for slot in out.values.iter_mut().filter(|(n, _)| *n == f.name) {
                    slot.1 = v as u32;
                }
            }
        }
    }
    if out.report_frame_ms && (!out.timing || !matches!(out.frames, Some(n) if n >= 2)) {
        return Err("--report-frame-ms needs --timing and --frames N with N >= 2".into());
    }
    Ok(Parsed::Run(out))
}

/// Parses `std::env::args()`; prints the usage and exits 0 on `--help`, prints one line
/// `<name>: <error>` on stderr and exits 2 on a bad command line.
pub fn parse_or_exit(spec: &Spec) -> Args {
    match parse(spec, std::env::args().skip(1)) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            print!("{}", usage(spec));
            std::process::exit(0);
        }
        Err(e) => usage_error(spec, &e),
    }
}

/// [`parse_or_exit`] for an example that adds one boolean switch `flag` to the common flags
/// (not an [`IntFlag`]): whether it was given, and the arguments; `--help` lists it with
/// `what`.
pub fn parse_with_switch_or_exit(spec: &Spec, flag: &str, what: &str) -> (Args, bool) {
    let mut given = false;
    let rest: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| {
            let hit = a == flag;
            given |= hit;
            !hit
        })
        .collect();
    match parse(spec, &rest) {
        Ok(Parsed::Run(a)) => (a, given),
        Ok(Parsed::Help) => {
            let line = format!("  {flag:<16} {what}\n  --help ");
            print!("{}", usage(spec).replacen("  --help ", &line, 1));
            std::process::exit(0);
        }
        Err(e) => usage_error(spec, &e),
    }
}

/// Prints `<name>: <msg>` on stderr and exits 2 (for checks an example does after parsing).
pub fn usage_error(spec: &Spec, msg: &str) -> ! {
    eprintln!("{}: {}", spec.name, msg.replace('\n', " "));
    std::process::exit(2);
}

/// Exits with a usage error unless the composite scenes' window holds their S×S rectangle at
/// (W/2, H/2) and D's quarter-height strip: `side` at most half the width and the height, and
/// a height of at least 4 (`offscreen_pass`, `compute_pass`).
pub fn check_composite_side(spec: &Spec, args: &Args, side: u32) {
    if side > args.width / 2 || side > args.height / 2 {
        usage_error(
            spec,
            "--target: must be at most half the surface's width and height",
        );
    }
    if args.height < 4 {
        usage_error(spec, "--size: needs a height of at least 4");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        name: "t",
        about: "test",
        default_size: (64, 32),
        flags: &[IntFlag {
            name: "layers",
            value: "K",
            default: 8,
            min: 1,
            help: "layers",
        }],
        expected: "calls = 6 + 2K\n",
    };

    fn run(a: &[&str]) -> Result<Args, String> {
        match parse(&SPEC, a)? {
            Parsed::Run(a) => Ok(a),
            Parsed::Help => Err("help".into()),
        }
    }

    #[test]
    fn defaults() {
        let a = run(&[]).unwrap();
        assert_eq!(a.frames, None);
        assert_eq!(a.api, Api::Gles);
        assert_eq!((a.width, a.height), (64, 32));
        assert!(!a.timing && !a.checksum);
        assert_eq!(a.slow_ms, None);
        assert_eq!(a.get("layers"), 8);
    }

    #[test]
    fn all_flags() {
        let a = run(&[
            "--frames",
            "3",
            "--api=gl",
            "--size",
            "10x20",
            "--timing",
            "--checksum",
            "--slow-ms=40",
            "--report-frame-ms",
            "--layers=5",
        ])
        .unwrap();
        assert_eq!(a.frames, Some(3));
        assert_eq!(a.api, Api::Gl);
        assert_eq!((a.width, a.height), (10, 20));
        assert!(a.timing && a.checksum);
        assert_eq!(a.slow_ms, Some(40));
        assert!(a.report_frame_ms);
        assert_eq!(a.get("layers"), 5);
    }

    #[test]
    fn errors() {
        assert!(run(&["--bogus"]).is_err());
        assert!(run(&["--frames"]).is_err());
        assert!(run(&["--frames", "x"]).is_err());
        assert!(run(&["--api", "vk"]).is_err());
        assert!(run(&["--size", "0x3"]).is_err());
        assert!(run(&["--size", "3"]).is_err());
        assert!(run(&["--layers", "0"]).is_err());
        assert!(run(&["--timing=1"]).is_err());
        assert!(run(&["--report-frame-ms", "--frames", "3"]).is_err());
        assert!(run(&["--report-frame-ms", "--timing", "--frames", "1"]).is_err());
        assert!(run(&["positional"]).is_err());
        assert_eq!(parse(&SPEC, ["--help"]).unwrap(), Parsed::Help);
    }

    #[test]
    fn usage_mentions_everything() {
        let u = usage(&SPEC);
        for s in [
            "--frames",
            "--api",
            "--size",
            "--timing",
            "--checksum",
            "--slow-ms N",
            "--report-frame-ms",
            "--layers K",
            "6 + 2K",
            "64x32",
        ] {
            assert!(u.contains(s), "{s} missing from usage");
        }
    }
}
