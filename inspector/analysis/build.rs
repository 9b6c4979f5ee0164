//! Generates the enum-name tables the report uses to print GLenum / GLbitfield arguments by
//! name, from the same Khronos registry the agent's wrappers come from.

use gpuheat_registry::Registry;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Prefers core names (no vendor suffix) when several names share a value.
fn rank(name: &str) -> usize {
    let suffixed = [
        "_ARB", "_EXT", "_KHR", "_OES", "_NV", "_AMD", "_SGIX", "_SGIS", "_APPLE", "_ATI", "_IBM",
        "_INTEL", "_MESA", "_QCOM", "_ANGLE", "_IMG", "_ARM", "_3DFX", "_SUN", "_HP", "_PGI",
        "_OML", "_SGI", "_INGR", "_MESAX", "_WIN", "_REND", "_S3", "_GREMEDY", "_OVR", "_DMP",
        "_FJ", "_VIV", "_SUNX", "_SEC",
    ];
    usize::from(suffixed.iter().any(|s| name.ends_with(s))) * 1000 + name.len()
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let reg = Registry::load().expect("Khronos registry");
    // OpenVG's enums are named only through their parameter's group: their values collide
    // with GL's, so they never enter the by-value table a parameter without a group falls
    // back to (every VG enum parameter has one; the registry's tests check it).
    let vg = Registry::load_vg().expect("OpenVG table");
    let mut by_value: BTreeMap<u64, &str> = BTreeMap::new();
    let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
    for e in &vg.enums {
        by_name.insert(&e.name, e.value);
    }
    for e in &reg.enums {
        by_name.insert(&e.name, e.value);
        if e.bitmask || e.value <= 1 {
            continue; // 0 and 1 have dozens of names; only a group can say which.
        }
        let slot = by_value.entry(e.value).or_insert(&e.name);
        if rank(&e.name) < rank(slot) {
            *slot = &e.name;
        }
    }
    let mut out = String::new();
    out.push_str(
        "/// (value, preferred name), sorted by value.\npub static BY_VALUE: &[(u64, &str)] = &[\n",
    );
    for (v, n) in &by_value {
        writeln!(out, "    ({v}, {n:?}),").unwrap();
    }
    out.push_str(
        "];\n/// (name, value), sorted by name.\npub static BY_NAME: &[(&str, u64)] = &[\n",
    );
    for (n, v) in &by_name {
        writeln!(out, "    ({n:?}, {v}),").unwrap();
    }
    out.push_str("];\n/// (group, member names), sorted by group.\npub static GROUPS: &[(&str, &[&str])] = &[\n");
    let mut groups: Vec<_> = reg.groups.iter().chain(&vg.groups).collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    groups.dedup_by(|a, b| a.name == b.name);
    for g in groups {
        writeln!(out, "    ({:?}, &{:?}),", g.name, g.members).unwrap();
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("enums.rs");
    std::fs::write(dest, out).unwrap();
}
