//! Fallback fonts for what egui's built-in fonts lack (CJK, emoji, the symbols agent CLIs draw:
//! ⏺ ✻ ⎿ ✔, box drawing beyond Hack's): system fonts found through fontconfig (`fc-list
//! :charset=...`), else at the usual Debian paths, appended to both families at start.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use eframe::egui::{self, FontData, FontDefinitions, FontFamily};

/// Characters of each kind (a font must have them all) the terminal must show, and fonts known to have it (tried in order
/// when fontconfig finds none).
const WANTED: &[(&str, &[&str])] = &[
    ("⎿", &["/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]),
    ("✔", &["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]),
    (
        "⏺",
        &[
            "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf",
            "/usr/share/fonts/truetype/noto/NotoSansSymbols2-Regular.ttf",
        ],
    ),
    (
        "😀🚀",
        &[
            "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf",
            "/usr/share/fonts/truetype/noto/NotoEmoji-Regular.ttf",
        ],
    ),
    (
        "の漢한",
        &[
            "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
            "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
            "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        ],
    ),
];

/// Monospaced fonts first, then the rest; colour-bitmap fonts (Noto Color Emoji) are left out:
/// egui is built without colour glyphs and would draw them blank.
fn rank(path: &str) -> u8 {
    let lower = path.to_ascii_lowercase();
    if lower.contains("mono") { 0 } else { 1 }
}

fn usable(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    !["color", "bold", "oblique", "italic", "condensed", "light"].iter().any(|w| lower.contains(w))
        && (lower.ends_with(".ttf") || lower.ends_with(".otf") || lower.ends_with(".ttc"))
}

/// The fallback files, one per wanted character (duplicates removed), in the order to try them.
pub(crate) fn fallback_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for (sample, known) in WANTED {
        let found =
            fontconfig(sample).or_else(|| known.iter().find(|p| std::path::Path::new(p).exists()).map(PathBuf::from));
        if let Some(path) = found
            && !files.contains(&path)
        {
            files.push(path);
        }
    }
    files
}

/// The font fontconfig lists for a character, monospaced preferred.
fn fontconfig(sample: &str) -> Option<PathBuf> {
    let charset: Vec<String> = sample.chars().map(|c| format!("{:x}", u32::from(c))).collect();
    let out = Command::new("fc-list").arg(format!(":charset={}", charset.join(" "))).arg("file").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut paths: Vec<&str> =
        text.lines().map(|l| l.trim().trim_end_matches(':')).filter(|p| !p.is_empty() && usable(p)).collect();
    paths.sort_by_key(|p| (rank(p), p.len(), *p));
    paths.first().map(PathBuf::from)
}

/// egui's fonts with the fallbacks appended to the monospace and proportional families.
pub(crate) fn install(ctx: &egui::Context) {
    let mut defs = FontDefinitions::default();
    for (i, path) in fallback_files().into_iter().enumerate() {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let name = format!("fallback-{i}-{}", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
        defs.font_data.insert(name.clone(), Arc::new(FontData::from_owned(bytes)));
        for family in [FontFamily::Monospace, FontFamily::Proportional] {
            defs.families.entry(family).or_default().push(name.clone());
        }
    }
    ctx.set_fonts(defs);
}
