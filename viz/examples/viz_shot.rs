//! `viz_shot SESSION OUT.png [heat|mesh|surface] [draw=CALL] [pick=X,Y] [frame=N] [WxH] [window]`:
//! renders the viewer offscreen (or in a real window, screenshotted), for trying it without
//! the CLI.

use gpuheat_viz::{open_window, screenshot, Tab, ViewOptions};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: viz_shot SESSION OUT.png [heat|mesh|surface] [draw=CALL] [pick=X,Y] [frame=N] [WxH]");
        std::process::exit(2);
    }
    let mut opts = ViewOptions::default();
    let mut window = false;
    for a in &args[2..] {
        match a.as_str() {
            "window" => window = true,
            "heat" => opts.tab = Tab::Heat,
            "mesh" => opts.tab = Tab::Mesh,
            "surface" => opts.tab = Tab::Surface,
            _ => {
                if let Some(v) = a.strip_prefix("draw=") {
                    opts.select_draw = v.parse().ok();
                } else if let Some(v) = a.strip_prefix("frame=") {
                    opts.frame = v.parse().ok();
                } else if let Some((x, y)) = a.strip_prefix("pick=").and_then(|v| v.split_once(','))
                {
                    opts.pick = Some((x.parse().unwrap(), y.parse().unwrap()));
                } else if let Some((w, h)) = a.split_once('x') {
                    opts.size = (w.parse().unwrap(), h.parse().unwrap());
                }
            }
        }
    }
    let out = PathBuf::from(&args[1]);
    let result = if window {
        open_window(PathBuf::from(&args[0]), opts, Some(out))
    } else {
        screenshot(PathBuf::from(&args[0]), opts, &out)
    };
    if let Err(e) = result {
        eprintln!("viz_shot: error: {e}");
        std::process::exit(1);
    }
}
