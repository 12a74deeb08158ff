//! The colour theme in use. pi's theme files: the built-in `dark` and `light`, and the `*.json`
//! files of the project's `.rho/themes` and `.pi/themes`, the agent dir's `themes` and the
//! `themes` setting's files and directories (none of these with `--no-themes`), the `--theme`
//! paths, then those packages and extensions bring (the first theme of a name wins, before the
//! built-ins). The `theme` setting picks one at start; an unknown name or a bad file falls back
//! to `dark` with a warning. [`set`] switches while running; [`preview`] shows a theme for now
//! and [`end_preview`] puts back the one in effect before.

mod oklab;
mod palette;
mod parse;

use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ratatui::style::Color;

use self::palette::ColorMode;
use self::parse::Theme;
pub use self::parse::Token;
use rho_coding_agent::config::paths::ConfigPaths;
use rho_coding_agent::config::settings::Settings;

const BUILT_IN: [(&str, &str); 2] =
    [("dark", include_str!("theme/dark.json")), ("light", include_str!("theme/light.json"))];

/// The theme drawn with; `None` until [`init`] (the built-in dark then).
static ACTIVE: RwLock<Option<Theme>> = RwLock::new(None);
/// The theme in effect when a preview began; `None` while none is shown.
static BEFORE_PREVIEW: RwLock<Option<Theme>> = RwLock::new(None);
/// Where theme files are looked for (set by [`init`]).
static SOURCES: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());
/// The command line's say (set by [`command_line`]): `--theme` paths, and `--no-themes`.
static COMMAND_LINE: RwLock<(Vec<PathBuf>, bool)> = RwLock::new((Vec::new(), false));

/// The colour of `token` in the active theme (`None`: the terminal's default).
pub fn color(token: Token) -> Option<Color> {
    if let Some(theme) = ACTIVE.read().as_ref() {
        return theme.color(token);
    }
    dark().color(token)
}

/// Takes the command line's `--theme` paths (files or folders, read after the theme folders and
/// the `themes` setting, as pi reads them) and `--no-themes` (neither the folders nor the
/// setting are read), for [`init`] now and on `/reload`. A warning for each path that does not
/// exist.
pub fn command_line(paths: Vec<PathBuf>, no_themes: bool) -> Vec<String> {
    let warnings =
        paths.iter().filter(|p| !p.exists()).map(|p| format!("Theme path does not exist: {}", p.display())).collect();
    *COMMAND_LINE.write() = (paths, no_themes);
    warnings
}

/// Looks for themes where `paths`, `settings` and the command line say and activates the
/// `theme` setting's (by default `dark`, or `light` when `COLORFGBG` says the background is
/// light). A warning when it cannot be used and `dark` is used instead.
pub fn init(paths: &ConfigPaths, settings: &Settings) -> Option<String> {
    let (given, no_themes) = COMMAND_LINE.read().clone();
    let mut sources = Vec::new();
    if !no_themes {
        sources = vec![
            paths.project_dir().join("themes"),
            paths.pi_project_dir().join("themes"),
            paths.agent_dir.join("themes"),
        ];
        sources.extend(settings.get_string_list("themes").unwrap_or_default().iter().map(|p| paths.resolve(p)));
    }
    sources.extend(given.into_iter().filter(|p| !sources.contains(p)).collect::<Vec<_>>());
    *SOURCES.write() = sources;
    let name = settings.get_string("theme").unwrap_or_else(|| default_name(std::env::var("COLORFGBG").ok()));
    let error = set(&name).err()?;
    activate(dark().clone());
    Some(format!("{error}; using the dark theme"))
}

/// The names of the themes there are, sorted.
pub fn names() -> Vec<String> {
    names_in(&sources(), mode())
}

/// Makes `name` the active theme; on error (unknown, or a bad file) the active one stays (the
/// one before a preview, if any).
pub fn set(name: &str) -> Result<(), String> {
    end_preview();
    match load(name, &sources(), mode())? {
        Some(theme) => {
            activate(theme);
            Ok(())
        }
        None => Err(format!("unknown theme \"{name}\" (there are: {})", names().join(", "))),
    }
}

/// Shows `name` until [`end_preview`] or [`set`]; a theme that cannot be used is not shown.
pub fn preview(name: &str) {
    let Ok(Some(theme)) = load(name, &sources(), mode()) else { return };
    let mut before = BEFORE_PREVIEW.write();
    if before.is_none() {
        let active = ACTIVE.read().clone();
        *before = Some(active.unwrap_or_else(|| dark().clone()));
    }
    drop(before);
    activate(theme);
}

/// Puts back the theme in effect before the preview (nothing when none is shown).
pub fn end_preview() {
    let before = BEFORE_PREVIEW.write().take();
    if let Some(theme) = before {
        activate(theme);
    }
}

fn activate(theme: Theme) {
    *ACTIVE.write() = Some(theme);
}

/// Themes packages and extensions bring, after the user's own. When the `theme` setting named
/// one of them (it was unknown at start, and `dark` stood in), it is used now; the start's
/// warning stays only when it is still unknown.
pub fn add_sources(paths: Vec<PathBuf>, settings: &Settings, warning: Option<String>) -> Option<String> {
    if paths.is_empty() {
        return warning;
    }
    {
        let mut sources = SOURCES.write();
        for path in paths {
            if !sources.contains(&path) {
                sources.push(path);
            }
        }
    }
    let Some(name) = settings.get_string("theme") else {
        return warning;
    };
    match warning {
        Some(warning) => set(&name).err().map(|_| warning),
        None => None,
    }
}

fn sources() -> Vec<PathBuf> {
    SOURCES.read().clone()
}

fn mode() -> ColorMode {
    static MODE: OnceLock<ColorMode> = OnceLock::new();
    *MODE.get_or_init(|| ColorMode::detect(|name| std::env::var(name).ok()))
}

/// The built-in dark theme (all default colours, should its file ever not parse).
fn dark() -> &'static Theme {
    static DARK: OnceLock<Theme> = OnceLock::new();
    DARK.get_or_init(|| parse::parse("dark", BUILT_IN[0].1, mode()).unwrap_or_else(|_| Theme::plain("dark")))
}

/// pi's default: `light` when `COLORFGBG`'s background is a light colour (8 or above).
fn default_name(colorfgbg: Option<String>) -> String {
    let background = colorfgbg.and_then(|v| v.split(';').nth(1).and_then(|bg| bg.trim().parse::<u8>().ok()));
    if background.is_some_and(|bg| bg >= 8) { "light" } else { "dark" }.to_owned()
}

/// A theme file found in a source, under its `name` (its file name when it does not parse).
struct Found {
    name: String,
    theme: Result<Theme, String>,
}

fn discover(sources: &[PathBuf], mode: ColorMode) -> Vec<Found> {
    let mut found = Vec::new();
    for source in sources {
        if source.is_dir() {
            let Ok(entries) = std::fs::read_dir(source) else { continue };
            let mut files: Vec<PathBuf> =
                entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
            files.sort();
            found.extend(files.iter().map(|f| read(f, mode)));
        } else if source.extension().is_some_and(|e| e == "json") && source.is_file() {
            found.push(read(source, mode));
        }
    }
    found
}

fn read(path: &Path, mode: ColorMode) -> Found {
    let label = path.display().to_string();
    let theme = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read theme {label}: {e}"))
        .and_then(|text| parse::parse(&label, &text, mode));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = theme.as_ref().map_or(stem, |t| t.name.clone());
    Found { name, theme }
}

fn names_in(sources: &[PathBuf], mode: ColorMode) -> Vec<String> {
    let mut names: Vec<String> = BUILT_IN.iter().map(|(name, _)| (*name).to_owned()).collect();
    names.extend(discover(sources, mode).into_iter().map(|found| found.name));
    names.sort();
    names.dedup();
    names
}

/// The theme called `name`: a found file's first, else a built-in; `None` when there is none.
fn load(name: &str, sources: &[PathBuf], mode: ColorMode) -> Result<Option<Theme>, String> {
    if let Some(hit) = discover(sources, mode).into_iter().find(|f| f.name == name) {
        return hit.theme.map(Some).map_err(|e| e.replace('\n', " "));
    }
    match BUILT_IN.iter().find(|(n, _)| *n == name) {
        Some((label, text)) => parse::parse(label, text, mode).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_themes_parse_with_pi_values() {
        for (name, text) in BUILT_IN {
            let theme = parse::parse(name, text, ColorMode::TrueColor).unwrap();
            assert_eq!(theme.name, name);
        }
        let dark = load("dark", &[], ColorMode::TrueColor).unwrap().unwrap();
        assert_eq!(dark.color(Token::Accent), Some(Color::Rgb(0x8a, 0xbe, 0xb7)));
        assert_eq!(dark.color(Token::SyntaxKeyword), Some(Color::Rgb(0x56, 0x9c, 0xd6)));
        assert_eq!(dark.color(Token::Text), None);
        let light = load("light", &[], ColorMode::TrueColor).unwrap().unwrap();
        assert_eq!(light.color(Token::SyntaxKeyword), Some(Color::Rgb(0, 0, 0xff)));
    }

    #[test]
    fn files_are_found_by_their_name_and_bad_ones_by_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        let mine = BUILT_IN[1].1.replacen("\"light\"", "\"mine\"", 1);
        std::fs::write(project.join("a.json"), &mine).unwrap();
        std::fs::write(agent.join("mine.json"), BUILT_IN[0].1.replacen("\"dark\"", "\"mine\"", 1)).unwrap();
        std::fs::write(agent.join("broken.json"), "{").unwrap();
        std::fs::write(agent.join("notes.txt"), "not a theme").unwrap();
        let sources = [project, agent.clone()];

        let theme = load("mine", &sources, ColorMode::TrueColor).unwrap().unwrap();
        assert_eq!(theme.color(Token::SyntaxKeyword), Some(Color::Rgb(0, 0, 0xff)), "the project's wins");
        let broken = load("broken", &sources, ColorMode::TrueColor).unwrap_err();
        assert!(broken.starts_with(&format!("invalid theme {}: bad JSON", agent.join("broken.json").display())));
        assert_eq!(load("nope", &sources, ColorMode::TrueColor), Ok(None));
        assert_eq!(names_in(&sources, ColorMode::TrueColor), ["broken", "dark", "light", "mine"]);
    }

    #[test]
    fn colorfgbg_picks_light_for_a_light_background() {
        assert_eq!(default_name(None), "dark");
        assert_eq!(default_name(Some("15;0".into())), "dark");
        assert_eq!(default_name(Some("0;15".into())), "light");
        assert_eq!(default_name(Some("garbage".into())), "dark");
    }
}
