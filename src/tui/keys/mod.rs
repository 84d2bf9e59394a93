//! Every key binding in one table: the key handlers look actions up here and `/help` is
//! generated from it, so what the help says and what the keys do cannot drift apart.
//!
//! `BINDINGS` (`defaults`) names every action with its default keys; the table in force is that
//! one patched once at start by the user's `keys.toml` (`key_file`, read by `cli`), and every
//! look-up, `/help` and every hint on screen read the table in force.

mod defaults;

use std::borrow::Cow;
use std::sync::OnceLock;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use KeyCode as K;
pub use defaults::BINDINGS;

/// Where the keyboard focus is; bindings are looked up in the focused context first, then in
/// `Global`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyContext {
    Global,
    Composer,
    Completion,
    Approval,
    DenyReason,
    Overlay,
    Setup,
    HistorySearch,
    Search,
    PlanReady,
    Trust,
}

impl KeyContext {
    /// Every place keys work in, in the order `/help` and `docs/keys.md` list them.
    pub const ALL: [KeyContext; 11] = [
        KeyContext::Global,
        KeyContext::Composer,
        KeyContext::Completion,
        KeyContext::Approval,
        KeyContext::DenyReason,
        KeyContext::Overlay,
        KeyContext::Setup,
        KeyContext::HistorySearch,
        KeyContext::Search,
        KeyContext::PlanReady,
        KeyContext::Trust,
    ];

    pub fn title(self) -> &'static str {
        match self {
            KeyContext::Global => "Anywhere",
            KeyContext::Composer => "Writing a prompt",
            KeyContext::Completion => "Completion list (/commands, @files)",
            KeyContext::Approval => "Approval dialog",
            KeyContext::DenyReason => "Reason for a denial",
            KeyContext::Overlay => "Lists and views (/sessions, /memories, /context, /help)",
            KeyContext::Setup => "Setup screen",
            KeyContext::HistorySearch => "Searching prompt history (Ctrl+R)",
            KeyContext::Search => "Searching the transcript or a tool's output",
            KeyContext::PlanReady => "A plan is ready (after a plan-mode turn, prompt empty)",
            KeyContext::Trust => "Trusting a folder (before anything of it runs)",
        }
    }
}

/// Anywhere (unless a dialog or view takes the key first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalAction {
    ClearOrQuit,
    Interrupt,
    CycleMode,
    PageUp,
    PageDown,
    LineUp,
    LineDown,
    Top,
    FollowTail,
    ToggleToolOutput,
    ToggleTaskList,
    CopyAnswer,
    ToggleMouse,
    Redraw,
    /// Search the transcript (`/` only while scrolled back, where it cannot start a command).
    SearchTranscript,
    /// The whole output of the newest tool call on screen, in a scrollable view.
    ShowToolOutput,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComposerAction {
    Submit,
    Newline,
    HistoryPrev,
    HistoryNext,
    OpenEditor,
    DeleteToLineStart,
    Undo,
    SearchHistory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionAction {
    Prev,
    Next,
    Accept,
    /// Take the suggestion; a command that needs nothing more runs at once.
    Run,
    Dismiss,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalAction {
    Approve,
    ApproveForSession,
    ApproveForProject,
    TogglePrefix,
    Deny,
    ToggleDiffView,
    ScrollUp,
    ScrollDown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasonAction {
    Confirm,
    Cancel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlayAction {
    Close,
    Prev,
    Next,
    Open,
    TogglePin,
    ToggleGlobal,
    Delete,
    /// Search inside the view (a tool's output).
    Search,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistorySearchAction {
    Older,
    Newer,
    Accept,
    Cancel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchAction {
    Older,
    Newer,
    Close,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanAction {
    CarryOut,
    EditPlan,
    Dismiss,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupAction {
    Leave,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustAction {
    Trust,
    Decline,
    Quit,
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
}

/// An action, by the context it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Global(GlobalAction),
    Composer(ComposerAction),
    Completion(CompletionAction),
    Approval(ApprovalAction),
    Reason(ReasonAction),
    Overlay(OverlayAction),
    Setup(SetupAction),
    HistorySearch(HistorySearchAction),
    Search(SearchAction),
    Plan(PlanAction),
    Trust(TrustAction),
}

impl Action {
    pub fn context(self) -> KeyContext {
        match self {
            Action::Global(_) => KeyContext::Global,
            Action::Composer(_) => KeyContext::Composer,
            Action::Completion(_) => KeyContext::Completion,
            Action::Approval(_) => KeyContext::Approval,
            Action::Reason(_) => KeyContext::DenyReason,
            Action::Overlay(_) => KeyContext::Overlay,
            Action::Setup(_) => KeyContext::Setup,
            Action::HistorySearch(_) => KeyContext::HistorySearch,
            Action::Search(_) => KeyContext::Search,
            Action::Plan(_) => KeyContext::PlanReady,
            Action::Trust(_) => KeyContext::Trust,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const fn key(code: KeyCode) -> Key {
    Key { code, mods: KeyModifiers::NONE }
}

const fn ctrl(c: char) -> Key {
    Key { code: KeyCode::Char(c), mods: KeyModifiers::CONTROL }
}

const fn shift(code: KeyCode) -> Key {
    Key { code, mods: KeyModifiers::SHIFT }
}

const fn alt(code: KeyCode) -> Key {
    Key { code, mods: KeyModifiers::ALT }
}

const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}

#[derive(Clone, Debug)]
pub struct Binding {
    pub keys: Cow<'static, [Key]>,
    pub action: Action,
    pub help: &'static str,
}

impl Binding {
    pub fn context(&self) -> KeyContext {
        self.action.context()
    }
}

const fn bind(keys: &'static [Key], action: Action, help: &'static str) -> Binding {
    Binding { keys: Cow::Borrowed(keys), action, help }
}

/// A binding table: the defaults, or the defaults as the user's `keys.toml` patched them.
#[derive(Clone, Debug)]
pub struct KeyMap {
    bindings: Vec<Binding>,
}

impl Default for KeyMap {
    fn default() -> KeyMap {
        KeyMap { bindings: BINDINGS.to_vec() }
    }
}

impl KeyMap {
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    pub(crate) fn bindings_mut(&mut self) -> &mut [Binding] {
        &mut self.bindings
    }

    /// The action bound to `ev` in `context`.
    pub fn lookup(&self, context: KeyContext, ev: &KeyEvent) -> Option<Action> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        let k = normalise(ev);
        self.bindings
            .iter()
            .filter(|b| b.context() == context)
            .find(|b| b.keys.iter().any(|bk| *bk == k || ch_eq(bk, &k)))
            .map(|b| b.action)
    }

    /// The first key bound to `action`, for hints in the interface.
    pub fn hint(&self, action: Action) -> String {
        self.bindings.iter().find(|b| b.action == action).and_then(|b| b.keys.first()).map(describe).unwrap_or_default()
    }
}

static ACTIVE: OnceLock<KeyMap> = OnceLock::new();

/// Puts `map` in force for the rest of the process; `false` if a table already was (the first
/// one stays: the keys do not change under the user's fingers).
pub fn install(map: KeyMap) -> bool {
    ACTIVE.set(map).is_ok()
}

/// The table in force: the one installed at start, else the defaults.
pub fn active() -> &'static KeyMap {
    ACTIVE.get_or_init(KeyMap::default)
}

/// Modifiers that matter for matching: a shifted character arrives as its own character, and
/// Shift+Tab arrives as BackTab with or without Shift.
fn normalise(ev: &KeyEvent) -> Key {
    let mut mods = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
    let code = match ev.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => KeyCode::Char(c.to_ascii_lowercase()),
        other => other,
    };
    if matches!(code, KeyCode::Char(_)) && !mods.contains(KeyModifiers::CONTROL) {
        mods.remove(KeyModifiers::SHIFT);
    }
    Key { code, mods }
}

/// The action bound to `ev` in `context`, in the table in force.
pub fn lookup(context: KeyContext, ev: &KeyEvent) -> Option<Action> {
    active().lookup(context, ev)
}

/// Typed look-ups, one per context, so handlers match their own actions exhaustively.
macro_rules! typed_lookup {
    ($fn_name:ident, $variant:ident, $ty:ty) => {
        pub fn $fn_name(ev: &KeyEvent) -> Option<$ty> {
            let probe = Action::$variant(<$ty>::FIRST);
            if let Some(Action::$variant(a)) = lookup(probe.context(), ev) { Some(a) } else { None }
        }
    };
}

impl GlobalAction {
    const FIRST: GlobalAction = GlobalAction::ClearOrQuit;
}
impl ComposerAction {
    const FIRST: ComposerAction = ComposerAction::Submit;
}
impl CompletionAction {
    const FIRST: CompletionAction = CompletionAction::Prev;
}
impl ApprovalAction {
    const FIRST: ApprovalAction = ApprovalAction::Approve;
}
impl ReasonAction {
    const FIRST: ReasonAction = ReasonAction::Confirm;
}
impl OverlayAction {
    const FIRST: OverlayAction = OverlayAction::Close;
}
impl SetupAction {
    const FIRST: SetupAction = SetupAction::Leave;
}
impl HistorySearchAction {
    const FIRST: HistorySearchAction = HistorySearchAction::Older;
}
impl SearchAction {
    const FIRST: SearchAction = SearchAction::Older;
}
impl PlanAction {
    const FIRST: PlanAction = PlanAction::CarryOut;
}
impl TrustAction {
    const FIRST: TrustAction = TrustAction::Trust;
}

typed_lookup!(global, Global, GlobalAction);
typed_lookup!(composer, Composer, ComposerAction);
typed_lookup!(completion, Completion, CompletionAction);
typed_lookup!(approval, Approval, ApprovalAction);
typed_lookup!(reason, Reason, ReasonAction);
typed_lookup!(overlay, Overlay, OverlayAction);
typed_lookup!(setup, Setup, SetupAction);
typed_lookup!(history_search, HistorySearch, HistorySearchAction);
typed_lookup!(search, Search, SearchAction);
typed_lookup!(plan, Plan, PlanAction);
typed_lookup!(trust, Trust, TrustAction);

/// Letter bindings accept either case (Caps Lock should not disable `y`).
fn ch_eq(bound: &Key, got: &Key) -> bool {
    match (bound.code, got.code) {
        (KeyCode::Char(a), KeyCode::Char(b)) => {
            bound.mods == got.mods && a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(&b)
        }
        _ => false,
    }
}

/// `Ctrl+C`, `Shift+Tab`, `PgUp`, `y`.
pub fn describe(k: &Key) -> String {
    let mut out = String::new();
    if k.mods.contains(KeyModifiers::CONTROL) {
        out.push_str("Ctrl+");
    }
    if k.mods.contains(KeyModifiers::ALT) {
        out.push_str("Alt+");
    }
    if k.mods.contains(KeyModifiers::SHIFT) || k.code == KeyCode::BackTab {
        out.push_str("Shift+");
    }
    let name = match k.code {
        KeyCode::Char(c) if k.mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {
            c.to_ascii_uppercase().to_string()
        }
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "Enter".into(),
        KeyCode::Esc => "Esc".into(),
        KeyCode::Tab | KeyCode::BackTab => "Tab".into(),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        KeyCode::Up => "↑".into(),
        KeyCode::Down => "↓".into(),
        KeyCode::Left => "←".into(),
        KeyCode::Right => "→".into(),
        KeyCode::Home => "Home".into(),
        KeyCode::End => "End".into(),
        KeyCode::Delete => "Delete".into(),
        KeyCode::Backspace => "Backspace".into(),
        KeyCode::F(n) => format!("F{n}"),
        other => format!("{other:?}"),
    };
    out.push_str(&name);
    out
}

/// The keys of a binding as help shows them: `Shift+Enter / Ctrl+J / Alt+Enter`.
pub fn describe_keys(b: &Binding) -> String {
    let mut names: Vec<String> = b.keys.iter().map(describe).collect();
    names.dedup();
    names.join(" / ")
}

/// The first key bound to `action` in the table in force, for hints in the interface.
pub fn hint(action: Action) -> String {
    active().hint(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn keys_find_their_actions_in_their_context() {
        assert_eq!(global(&ev(K::Char('c'), KeyModifiers::CONTROL)), Some(GlobalAction::ClearOrQuit));
        assert_eq!(global(&ev(K::BackTab, KeyModifiers::SHIFT)), Some(GlobalAction::CycleMode));
        assert_eq!(composer(&ev(K::Enter, KeyModifiers::SHIFT)), Some(ComposerAction::Newline));
        assert_eq!(composer(&ev(K::Char('j'), KeyModifiers::CONTROL)), Some(ComposerAction::Newline));
        assert_eq!(composer(&ev(K::Enter, KeyModifiers::NONE)), Some(ComposerAction::Submit));
        assert_eq!(approval(&ev(K::Char('Y'), KeyModifiers::SHIFT)), Some(ApprovalAction::Approve));
        assert_eq!(composer(&ev(K::Char('y'), KeyModifiers::NONE)), None);
        assert_eq!(overlay(&ev(K::Esc, KeyModifiers::NONE)), Some(OverlayAction::Close));
        assert_eq!(setup(&ev(K::Char('q'), KeyModifiers::NONE)), Some(SetupAction::Leave));
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                if a.context() == b.context() {
                    for k in a.keys.iter() {
                        assert!(!b.keys.contains(k), "{} bound twice in {:?}", describe(k), a.context());
                    }
                }
            }
        }
    }

    #[test]
    fn keys_are_described_as_people_write_them() {
        assert_eq!(describe(&ctrl('c')), "Ctrl+C");
        assert_eq!(describe(&shift(K::BackTab)), "Shift+Tab");
        assert_eq!(hint(Action::Approval(ApprovalAction::ToggleDiffView)), "d");
        let newline = BINDINGS.iter().find(|b| b.action == Action::Composer(ComposerAction::Newline)).unwrap();
        assert_eq!(describe_keys(newline), "Shift+Enter / Ctrl+J / Alt+Enter");
    }
}
