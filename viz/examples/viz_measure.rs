//! `viz_measure SESSION [WxH]`: the viewer's first paint, load time and frame times,
//! measured offscreen (see `gpuheat_viz::measure`).

use gpuheat_viz::{measure, ViewOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(session) = args.first() else {
        eprintln!("usage: viz_measure SESSION [WxH]");
        std::process::exit(2);
    };
    let mut opts = ViewOptions::default();
    if let Some((w, h)) = args.get(1).and_then(|s| s.split_once('x')) {
        opts.size = (w.parse().unwrap_or(1280), h.parse().unwrap_or(800));
    }
    match measure(session.into(), opts) {
        Ok(m) => println!("{m:#?}"),
        Err(e) => {
            eprintln!("viz_measure: error: {e}");
            std::process::exit(1);
        }
    }
}
