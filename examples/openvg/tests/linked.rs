//! A program linked against the cdylib (`-lOpenVG`, this package's `vg_rect` example)
//! runs through the soname link and calls the library's own exported entry points.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_program_linked_with_lopenvg_draws_through_the_shared_library() {
    // target/debug/deps/<this test> → target/debug
    let exe = std::env::current_exe().unwrap();
    let profile: PathBuf = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let example = profile.join("examples").join("vg_rect");
    assert!(
        example.exists(),
        "{} (built by cargo test)",
        example.display()
    );
    // deps/ holds the library this build linked the example against (target/debug/ gets
    // a copy only when the package is built on its own, so it may be older).
    let out = Command::new(&example)
        .env("LD_LIBRARY_PATH", profile.join("deps"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("red=1200\n"), "{stdout}");
    // The call resolved into the shared library, found by its soname.
    assert!(stdout.contains("vg_from="), "{stdout}");
    let from = stdout
        .lines()
        .find_map(|l| l.strip_prefix("vg_from="))
        .unwrap();
    assert!(from.ends_with("/libOpenVG.so.1"), "{from}");
}
