//! A deterministic web-application tree for the small-file workload, modelled on the
//! layout of a WordPress 4.x release (wp-admin, wp-includes with TinyMCE, jQuery UI,
//! SimplePie, Requests, ...; wp-content with three default themes and Akismet). The
//! directory skeleton and the file count per directory are fixed; the seed draws file
//! names, sizes (log-normal per file type), modes and modification times. Every seed gives
//! exactly `FILES` files and `TOTAL_BYTES` bytes, so runs with different seeds move the
//! same amount of data. See docs/methods/workloads.md for the distribution and how honest it is.

pub use crate::plan::tree_shape::{FILES, MAX_DIRS, TOTAL_BYTES};

/// Kinds of file, each with its own size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Php,
    Js,
    Css,
    Image,
    Font,
    Text,
}

impl Kind {
    fn ext(self, pick: u64) -> &'static str {
        match self {
            Kind::Php => "php",
            Kind::Js => ["js", "min.js"][(pick % 2) as usize],
            Kind::Css => ["css", "min.css", "rtl.css"][(pick % 3) as usize],
            Kind::Image => ["png", "gif", "svg", "jpg"][(pick % 4) as usize],
            Kind::Font => ["woff", "ttf", "eot", "svg"][(pick % 4) as usize],
            Kind::Text => ["txt", "html", "json", "crt"][(pick % 4) as usize],
        }
    }

    /// Median size in bytes and log-normal sigma, before the total is normalised.
    fn size_model(self) -> (f64, f64) {
        match self {
            Kind::Php => (5_500.0, 1.2),
            Kind::Js => (6_000.0, 1.5),
            Kind::Css => (7_000.0, 1.2),
            Kind::Image => (2_000.0, 1.6),
            Kind::Font => (45_000.0, 0.6),
            Kind::Text => (9_000.0, 1.3),
        }
    }
}

/// The skeleton: (directory, files, kind). Parents come before children.
const SKELETON: &[(&str, u64, Kind)] = &[
    ("", 19, Kind::Php),
    ("", 2, Kind::Text),
    ("wp-admin", 92, Kind::Php),
    ("wp-admin/css", 64, Kind::Css),
    ("wp-admin/css/colors", 4, Kind::Css),
    ("wp-admin/css/colors/blue", 4, Kind::Css),
    ("wp-admin/css/colors/coffee", 4, Kind::Css),
    ("wp-admin/css/colors/ectoplasm", 4, Kind::Css),
    ("wp-admin/css/colors/light", 4, Kind::Css),
    ("wp-admin/css/colors/midnight", 4, Kind::Css),
    ("wp-admin/css/colors/ocean", 4, Kind::Css),
    ("wp-admin/css/colors/sunrise", 4, Kind::Css),
    ("wp-admin/images", 48, Kind::Image),
    ("wp-admin/includes", 104, Kind::Php),
    ("wp-admin/js", 118, Kind::Js),
    ("wp-admin/js/widgets", 12, Kind::Js),
    ("wp-admin/maint", 1, Kind::Php),
    ("wp-admin/network", 21, Kind::Php),
    ("wp-admin/user", 8, Kind::Php),
    ("wp-content", 1, Kind::Php),
    ("wp-content/plugins", 2, Kind::Php),
    ("wp-content/plugins/akismet", 9, Kind::Php),
    ("wp-content/plugins/akismet/_inc", 4, Kind::Js),
    ("wp-content/plugins/akismet/_inc/img", 2, Kind::Image),
    ("wp-content/plugins/akismet/views", 10, Kind::Php),
    ("wp-content/themes", 1, Kind::Php),
    ("wp-content/themes/twentyfifteen", 24, Kind::Php),
    ("wp-content/themes/twentyfifteen/css", 5, Kind::Css),
    ("wp-content/themes/twentyfifteen/genericons", 6, Kind::Font),
    ("wp-content/themes/twentyfifteen/inc", 5, Kind::Php),
    ("wp-content/themes/twentyfifteen/js", 6, Kind::Js),
    ("wp-content/themes/twentyfifteen/languages", 1, Kind::Text),
    ("wp-content/themes/twentysixteen", 24, Kind::Php),
    ("wp-content/themes/twentysixteen/css", 5, Kind::Css),
    ("wp-content/themes/twentysixteen/genericons", 6, Kind::Font),
    ("wp-content/themes/twentysixteen/inc", 5, Kind::Php),
    ("wp-content/themes/twentysixteen/js", 7, Kind::Js),
    (
        "wp-content/themes/twentysixteen/template-parts",
        6,
        Kind::Php,
    ),
    ("wp-content/themes/twentyseventeen", 22, Kind::Php),
    ("wp-content/themes/twentyseventeen/assets", 0, Kind::Php),
    ("wp-content/themes/twentyseventeen/assets/css", 3, Kind::Css),
    (
        "wp-content/themes/twentyseventeen/assets/images",
        6,
        Kind::Image,
    ),
    ("wp-content/themes/twentyseventeen/assets/js", 8, Kind::Js),
    ("wp-content/themes/twentyseventeen/inc", 8, Kind::Php),
    (
        "wp-content/themes/twentyseventeen/template-parts",
        0,
        Kind::Php,
    ),
    (
        "wp-content/themes/twentyseventeen/template-parts/footer",
        2,
        Kind::Php,
    ),
    (
        "wp-content/themes/twentyseventeen/template-parts/header",
        2,
        Kind::Php,
    ),
    (
        "wp-content/themes/twentyseventeen/template-parts/navigation",
        1,
        Kind::Php,
    ),
    (
        "wp-content/themes/twentyseventeen/template-parts/page",
        3,
        Kind::Php,
    ),
    (
        "wp-content/themes/twentyseventeen/template-parts/post",
        8,
        Kind::Php,
    ),
    ("wp-includes", 214, Kind::Php),
    ("wp-includes/ID3", 18, Kind::Php),
    ("wp-includes/IXR", 10, Kind::Php),
    ("wp-includes/Requests", 12, Kind::Php),
    ("wp-includes/Requests/Auth", 1, Kind::Php),
    ("wp-includes/Requests/Cookie", 1, Kind::Php),
    ("wp-includes/Requests/Exception", 5, Kind::Php),
    ("wp-includes/Requests/Exception/HTTP", 30, Kind::Php),
    ("wp-includes/Requests/Exception/Transport", 1, Kind::Php),
    ("wp-includes/Requests/Proxy", 1, Kind::Php),
    ("wp-includes/Requests/Response", 1, Kind::Php),
    ("wp-includes/Requests/Transport", 2, Kind::Php),
    ("wp-includes/Requests/Utility", 2, Kind::Php),
    ("wp-includes/SimplePie", 20, Kind::Php),
    ("wp-includes/SimplePie/Cache", 9, Kind::Php),
    ("wp-includes/SimplePie/Content", 0, Kind::Php),
    ("wp-includes/SimplePie/Content/Type", 1, Kind::Php),
    ("wp-includes/SimplePie/Decode", 0, Kind::Php),
    ("wp-includes/SimplePie/Decode/HTML", 1, Kind::Php),
    ("wp-includes/SimplePie/HTTP", 1, Kind::Php),
    ("wp-includes/SimplePie/Net", 1, Kind::Php),
    ("wp-includes/SimplePie/Parse", 1, Kind::Php),
    ("wp-includes/SimplePie/XML", 0, Kind::Php),
    ("wp-includes/SimplePie/XML/Declaration", 1, Kind::Php),
    ("wp-includes/Text", 1, Kind::Php),
    ("wp-includes/Text/Diff", 3, Kind::Php),
    ("wp-includes/Text/Diff/Engine", 4, Kind::Php),
    ("wp-includes/Text/Diff/Renderer", 1, Kind::Php),
    ("wp-includes/certificates", 1, Kind::Text),
    ("wp-includes/css", 52, Kind::Css),
    ("wp-includes/customize", 40, Kind::Php),
    ("wp-includes/fonts", 6, Kind::Font),
    ("wp-includes/images", 32, Kind::Image),
    ("wp-includes/images/crystal", 10, Kind::Image),
    ("wp-includes/images/media", 10, Kind::Image),
    ("wp-includes/images/smilies", 46, Kind::Image),
    ("wp-includes/images/wlw", 3, Kind::Image),
    ("wp-includes/js", 82, Kind::Js),
    ("wp-includes/js/codemirror", 6, Kind::Js),
    ("wp-includes/js/crop", 3, Kind::Js),
    ("wp-includes/js/imgareaselect", 6, Kind::Js),
    ("wp-includes/js/jcrop", 3, Kind::Js),
    ("wp-includes/js/jquery", 16, Kind::Js),
    ("wp-includes/js/jquery/ui", 62, Kind::Js),
    ("wp-includes/js/mediaelement", 24, Kind::Js),
    ("wp-includes/js/mediaelement/renderers", 6, Kind::Js),
    ("wp-includes/js/plupload", 6, Kind::Js),
    ("wp-includes/js/swfupload", 4, Kind::Js),
    ("wp-includes/js/thickbox", 4, Kind::Js),
    ("wp-includes/js/tinymce", 6, Kind::Js),
    ("wp-includes/js/tinymce/langs", 1, Kind::Js),
    ("wp-includes/js/tinymce/plugins", 0, Kind::Js),
    ("wp-includes/js/tinymce/plugins/charmap", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/colorpicker", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/compat3x", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/compat3x/css", 1, Kind::Css),
    ("wp-includes/js/tinymce/plugins/directionality", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/fullscreen", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/hr", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/image", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/link", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/lists", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/media", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/paste", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/tabfocus", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/textcolor", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wordpress", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpautoresize", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpdialogs", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpeditimage", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpemoji", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpgallery", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wplink", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wptextpattern", 2, Kind::Js),
    ("wp-includes/js/tinymce/plugins/wpview", 2, Kind::Js),
    ("wp-includes/js/tinymce/skins", 0, Kind::Css),
    ("wp-includes/js/tinymce/skins/lightgray", 6, Kind::Css),
    (
        "wp-includes/js/tinymce/skins/lightgray/fonts",
        8,
        Kind::Font,
    ),
    ("wp-includes/js/tinymce/skins/lightgray/img", 4, Kind::Image),
    ("wp-includes/js/tinymce/skins/wordpress", 1, Kind::Css),
    (
        "wp-includes/js/tinymce/skins/wordpress/images",
        14,
        Kind::Image,
    ),
    ("wp-includes/js/tinymce/themes", 0, Kind::Js),
    ("wp-includes/js/tinymce/themes/inlite", 2, Kind::Js),
    ("wp-includes/js/tinymce/themes/modern", 2, Kind::Js),
    ("wp-includes/js/tinymce/utils", 4, Kind::Js),
    ("wp-includes/pomo", 5, Kind::Php),
    ("wp-includes/random_compat", 12, Kind::Php),
    ("wp-includes/rest-api", 4, Kind::Php),
    ("wp-includes/rest-api/endpoints", 14, Kind::Php),
    ("wp-includes/rest-api/fields", 5, Kind::Php),
    ("wp-includes/theme-compat", 7, Kind::Php),
    ("wp-includes/widgets", 20, Kind::Php),
];

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Relative to the tree's root, `/`-separated.
    pub path: String,
    pub size: u64,
    pub mode: u32,
    pub mtime_ns: i128,
    /// Selects the file's bytes (see `fill`).
    pub content: u64,
}

/// The generated tree: directories (parents first, the root excluded) and files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub dirs: Vec<String>,
    pub files: Vec<TreeFile>,
}

impl Tree {
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(state: &mut u64) -> f64 {
    ((splitmix(state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal draw (Box-Muller).
fn normal(state: &mut u64) -> f64 {
    let (u1, u2) = (unit(state), unit(state));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

const STEMS: &[&str] = &[
    "class", "admin", "post", "user", "media", "theme", "widget", "option", "comment", "meta",
    "query", "template", "script", "style", "list", "edit", "nav", "menu", "cache", "feed",
];

/// The release the tree pretends to be: mtimes fall on 2017-11-29 (WordPress 4.9).
const RELEASE_S: i64 = 1_511_913_600;

/// The tree for `seed`: the same seed always gives the same tree.
pub fn generate(seed: u64) -> Tree {
    let mut rng = seed ^ 0x5745_4250_5245_5353;
    let skeleton_files: u64 = SKELETON.iter().map(|s| s.1).sum();
    // The largest directory (wp-includes) absorbs the difference to FILES.
    let filler = SKELETON
        .iter()
        .position(|s| s.0 == "wp-includes")
        .unwrap_or(0);
    let mut dirs = Vec::new();
    let mut files = Vec::with_capacity(FILES as usize);
    let mut raw: Vec<f64> = Vec::with_capacity(FILES as usize);
    for (i, &(dir, n, kind)) in SKELETON.iter().enumerate() {
        if !dir.is_empty() && !dirs.iter().any(|d| d == dir) {
            dirs.push(dir.to_string());
        }
        let n = if i == filler {
            (n + FILES).saturating_sub(skeleton_files)
        } else {
            n
        };
        for j in 0..n {
            let r = splitmix(&mut rng);
            let stem = STEMS[(r % STEMS.len() as u64) as usize];
            let name = format!("{stem}-{j}.{}", kind.ext(r >> 32));
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            let (median, sigma) = kind.size_model();
            raw.push((median * (sigma * normal(&mut rng)).exp()).clamp(20.0, 2e6));
            let jitter_s = (splitmix(&mut rng) % 86_400) as i64;
            // Whole seconds, as a release tarball keeps them, so every target stores them
            // exactly (libnfs and libsmbclient set times in microseconds: a nanosecond
            // part made every re-sync copy every file again). The draw that gave the
            // nanoseconds stays, so a seed's names and sizes are what they were.
            let _ = splitmix(&mut rng);
            files.push(TreeFile {
                path,
                size: 0,
                mode: 0o644,
                mtime_ns: i128::from(RELEASE_S + jitter_s) * 1_000_000_000,
                content: splitmix(&mut rng),
            });
        }
    }
    // Normalise to exactly TOTAL_BYTES: scale, floor (at least 1 byte), and give the rest
    // (or take the excess) from the largest file.
    let sum: f64 = raw.iter().sum();
    let scale = TOTAL_BYTES as f64 / sum;
    let mut total = 0u64;
    for (f, r) in files.iter_mut().zip(&raw) {
        f.size = ((r * scale) as u64).max(1);
        total += f.size;
    }
    if let Some(big) = files.iter_mut().max_by_key(|f| f.size) {
        big.size = (big.size + TOTAL_BYTES).saturating_sub(total).max(1);
    }
    Tree { dirs, files }
}

/// The bytes of a file: a cheap pseudo-random stream selected by `content` (the same
/// `content` always gives the same bytes), written into `buf`.
pub fn fill(buf: &mut [u8], content: u64) {
    let mut state = content;
    for chunk in buf.chunks_mut(8) {
        let w = splitmix(&mut state).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_tree_and_documented_totals() {
        let a = generate(7);
        assert_eq!(a, generate(7));
        assert_ne!(a, generate(8));
        for seed in [1, 2, 7, 12345] {
            let t = generate(seed);
            assert_eq!(t.files.len() as u64, FILES);
            assert_eq!(t.total_bytes(), TOTAL_BYTES);
            assert!(t.dirs.len() as u64 <= MAX_DIRS);
            assert!(t.files.iter().all(|f| f.size >= 1));
        }
    }

    #[test]
    fn shape_is_web_like() {
        let t = generate(1);
        assert_eq!(t.dirs.len(), 140);
        let depth = t.files.iter().map(|f| f.path.matches('/').count()).max();
        assert_eq!(depth, Some(6));
        let mut sizes: Vec<u64> = t.files.iter().map(|f| f.size).collect();
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        // Mostly small files, a few large ones: median well under the mean (19.4 KB).
        assert!((2_000..15_000).contains(&median), "median {median}");
        assert!(*sizes.last().unwrap() > 200_000);
        // Parents come before their children, and every file's directory exists.
        for (i, d) in t.dirs.iter().enumerate() {
            if let Some((parent, _)) = d.rsplit_once('/') {
                assert!(t.dirs[..i].iter().any(|p| p == parent), "{d}");
            }
        }
        for f in &t.files {
            if let Some((dir, _)) = f.path.rsplit_once('/') {
                assert!(t.dirs.iter().any(|d| d == dir), "{}", f.path);
            }
        }
        let mut names: Vec<&str> = t.files.iter().map(|f| f.path.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len() as u64, FILES);
    }

    #[test]
    fn fill_is_deterministic() {
        let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 100]);
        fill(&mut a, 3);
        fill(&mut b, 3);
        assert_eq!(a, b);
        fill(&mut b, 4);
        assert_ne!(a, b);
    }
}
