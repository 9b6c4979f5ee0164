//! PROG records: the agent names each program by the hash of its shaders' stages and
//! sources, the same in every run, so draws can be matched across sessions. Checked against
//! the hash computed here from the examples' own shader sources.

mod common;
use common::*;
use gpuheat_examples::gfx::{Api, LOOP_FS, RECT_VS, SOLID_FS};
use gpuheat_examples::gl::{GL_FRAGMENT_SHADER, GL_VERTEX_SHADER};
use gpuheat_session::{source_hash, ProgramInfo, Session};
use std::path::Path;
use std::process::Command;

/// The hash of the examples' `RECT_VS` + `fs` program on `api`: each shader's source is the
/// API's header followed by the body (`Gfx::program`), hashed sorted by stage.
fn expected(api: Api, fs: &str) -> u64 {
    let header = api.shader_header();
    let (vs, fs) = (format!("{header}{RECT_VS}"), format!("{header}{fs}"));
    source_hash([
        (GL_FRAGMENT_SHADER, fs.as_bytes()),
        (GL_VERTEX_SHADER, vs.as_bytes()),
    ])
}

/// The one PROG record of a session (checked to be the only one, of a measured context).
fn only_program(session: &Path) -> ProgramInfo {
    let s = Session::open(session).unwrap();
    assert_eq!(s.programs.len(), 1, "{:?}", s.programs);
    let p = s.programs[0].clone();
    assert!(p.program != 0, "{p:?}");
    assert_eq!(p.stages, [GL_FRAGMENT_SHADER, GL_VERTEX_SHADER]);
    // The sources themselves, in the order hashed: whole (far below the bounds), so they
    // hash to the program's name.
    assert_eq!(p.sources.len(), p.stages.len(), "{p:?}");
    assert_eq!(
        gpuheat_session::source_hash(
            p.stages
                .iter()
                .copied()
                .zip(p.sources.iter().map(|s| s.as_bytes()))
        ),
        p.source_hash,
        "{p:?}"
    );
    assert!(
        s.contexts.iter().any(|c| c.handle == p.context),
        "{p:?} names no context of {:?}",
        s.contexts
    );
    p
}

/// `gpuheat run` of example `name` on `api` (with `gpuheat_args`, the program's environment
/// plus `env`), in a directory of its own; the session's one program.
fn run_with(
    dir: &Path,
    name: &str,
    api: Api,
    tag: &str,
    gpuheat_args: &[&str],
    env: &[(&str, &str)],
) -> ProgramInfo {
    let session = dir.join(format!("{name}-{api}-{tag}.gpuheat"));
    let exe = example(name);
    let out = Command::new("timeout")
        .args(["-k5", "240"])
        .arg(gpuheat())
        .args(["run", "-o", session.to_str().unwrap(), "--frames", "2"])
        .args(gpuheat_args)
        .arg("--")
        .arg(exe)
        .args(["--api", api.name(), "--size", "64x64"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gpuheat run {name} {tag} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    only_program(&session)
}

/// A capture variant: (tag, gpuheat arguments, extra environment).
type Variant = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

fn run_once(dir: &Path, name: &str, api: Api, run: u32) -> ProgramInfo {
    run_with(dir, name, api, &run.to_string(), &[], &[])
}

#[test]
fn a_launched_program_is_named_by_its_shaders_the_same_in_every_run() {
    let dir = scratch("programs-launch");
    for api in Api::ALL {
        let hot = run_once(&dir, "hot_spot", api, 1);
        assert_eq!(hot.source_hash, expected(api, LOOP_FS), "{api}: {hot:?}");
        let again = run_once(&dir, "hot_spot", api, 2);
        assert_eq!(again.source_hash, hot.source_hash, "{api}");
        // Another program, another shader: another name.
        let solid = run_once(&dir, "overdraw", api, 1);
        assert_eq!(
            solid.source_hash,
            expected(api, SOLID_FS),
            "{api}: {solid:?}"
        );
        assert_ne!(solid.source_hash, hot.source_hash, "{api}");
        // Another example with the same shaders: the same name.
        let fill = run_once(&dir, "fill_cost", api, 1);
        assert_eq!(fill.source_hash, hot.source_hash, "{api}");
        // Named whatever is captured: in timeline mode, with geometry capture off, and when
        // the program links within the first captured frame (`--skip 0`).
        let variants: [Variant; 3] = [
            ("timeline", &["--mode", "timeline"], &[]),
            ("no-geometry", &[], &[("GPUHEAT_GEOMETRY_VERTICES", "0")]),
            ("skip-0", &["--skip", "0"], &[]),
        ];
        for (tag, args, env) in variants {
            let p = run_with(&dir, "hot_spot", api, tag, args, env);
            assert_eq!(p.source_hash, hot.source_hash, "{api} {tag}");
        }
    }
    // The shading language header is part of the source.
    assert_ne!(expected(Api::Gl, LOOP_FS), expected(Api::Gles, LOOP_FS));
}

fn attach(dir: &Path, target: &Running, n: u32) -> Session {
    let session = dir.join(format!("attach-{}-{n}.gpuheat", target.0.id()));
    let pid = target.0.id().to_string();
    let out = run_gpuheat(&[
        "attach",
        &pid,
        "--frames",
        "2",
        "-o",
        session.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "attach failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Session::open(&session).unwrap()
}

#[test]
fn an_attached_program_linked_before_the_attach_is_named_while_its_shaders_are_attached() {
    let dir = scratch("programs-attach");
    for api in Api::ALL {
        // The program keeps its shaders attached: the agent reads them at the first
        // captured frame that uses the program.
        let target = Running::start(
            "hot_spot",
            &["--api", api.name(), "--size", "64x64", "--keep-shaders"],
        );
        let first = attach(&dir, &target, 1);
        assert_eq!(first.programs.len(), 1, "{api}: {:?}", first.programs);
        let p = &first.programs[0];
        assert_eq!(p.source_hash, expected(api, LOOP_FS), "{api}: {p:?}");
        assert_eq!(p.program, first.states[0].program, "{api}");
        // A second attach gets the record again, without it being linked again.
        let second = attach(&dir, &target, 2);
        assert_eq!(second.programs, first.programs, "{api}");
        drop(target);

        // Shaders detached after the link (the common case): their sources are gone, so
        // the program stays unnamed (a known limit of attach mode).
        let target = Running::start("hot_spot", &["--api", api.name(), "--size", "64x64"]);
        let s = attach(&dir, &target, 3);
        assert!(s.programs.is_empty(), "{api}: {:?}", s.programs);
        assert_eq!(s.frames.len(), 2, "{api}");
    }
}
