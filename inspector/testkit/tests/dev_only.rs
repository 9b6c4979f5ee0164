//! The testkit panics on a test's mistakes, so no shipped crate may link it: every workspace
//! member names it under `[dev-dependencies]` or not at all.

use std::path::Path;

#[test]
fn no_member_depends_on_the_testkit_outside_its_dev_dependencies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = workspace
        .split("members = [")
        .nth(1)
        .and_then(|m| m.split(']').next())
        .expect("the workspace's members");
    let mut users = 0;
    for member in members.split(',').map(|m| m.trim().trim_matches('"')) {
        if member.is_empty() {
            continue;
        }
        let manifest = std::fs::read_to_string(root.join(member).join("Cargo.toml")).unwrap();
        let mut section = "";
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line;
            } else if line.starts_with("gpuheat-testkit") {
                assert_eq!(section, "[dev-dependencies]", "{member}: {line}");
                users += 1;
            }
        }
    }
    assert!(
        users >= 5,
        "{users} users of the testkit found: is the scan blind?"
    );
}
