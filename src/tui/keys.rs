//! Every key binding in one table: the key handlers look actions up here and `/help` is
//! generated from it, so what the help says and what the keys do cannot drift apart.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

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

pub struct Binding {
    pub keys: &'static [Key],
    pub action: Action,
    pub help: &'static str,
}

impl Binding {
    pub fn context(&self) -> KeyContext {
        self.action.context()
    }
}

const fn bind(keys: &'static [Key], action: Action, help: &'static str) -> Binding {
    Binding { keys, action, help }
}

use KeyCode as K;

pub const BINDINGS: &[Binding] = &[
    bind(
        &[ctrl('c')],
        Action::Global(GlobalAction::ClearOrQuit),
        "clear the prompt; on an empty prompt interrupt, twice quits",
    ),
    bind(
        &[key(K::Esc)],
        Action::Global(GlobalAction::Interrupt),
        "interrupt the running turn (the partial answer is kept)",
    ),
    bind(
        &[shift(K::BackTab), key(K::BackTab)],
        Action::Global(GlobalAction::CycleMode),
        "cycle modes edit → plan → ask",
    ),
    bind(&[key(K::PageUp)], Action::Global(GlobalAction::PageUp), "scroll the transcript up a page"),
    bind(&[key(K::PageDown)], Action::Global(GlobalAction::PageDown), "scroll the transcript down a page"),
    bind(
        &[shift(K::Up), Key { code: K::Up, mods: KeyModifiers::CONTROL }],
        Action::Global(GlobalAction::LineUp),
        "scroll up a line",
    ),
    bind(
        &[shift(K::Down), Key { code: K::Down, mods: KeyModifiers::CONTROL }],
        Action::Global(GlobalAction::LineDown),
        "scroll down a line",
    ),
    bind(
        &[Key { code: K::Home, mods: KeyModifiers::CONTROL }],
        Action::Global(GlobalAction::Top),
        "jump to the start of the session",
    ),
    bind(
        &[key(K::End), Key { code: K::End, mods: KeyModifiers::CONTROL }],
        Action::Global(GlobalAction::FollowTail),
        "return to the live tail",
    ),
    bind(
        &[ctrl('o')],
        Action::Global(GlobalAction::ToggleToolOutput),
        "expand or collapse every tool call's output, subagent and the model's thinking (click one to toggle it)",
    ),
    bind(
        &[ctrl('t')],
        Action::Global(GlobalAction::ToggleTaskList),
        "hide or show the task list panel (the agent keeps the list with its todo tool)",
    ),
    bind(
        &[alt(K::Char('c'))],
        Action::Global(GlobalAction::CopyAnswer),
        "copy the last answer to the clipboard (OSC 52, works over SSH)",
    ),
    bind(
        &[key(K::F(2))],
        Action::Global(GlobalAction::ToggleMouse),
        "free the mouse to select text natively; again to scroll with the wheel",
    ),
    bind(&[ctrl('l')], Action::Global(GlobalAction::Redraw), "repaint the screen"),
    bind(
        &[ctrl('f'), ch('/')],
        Action::Global(GlobalAction::SearchTranscript),
        "search the transcript (/ while scrolled back)",
    ),
    bind(
        &[alt(K::Char('o'))],
        Action::Global(GlobalAction::ShowToolOutput),
        "the whole output of the newest tool call on screen, scrollable",
    ),
    bind(&[key(K::Enter)], Action::Composer(ComposerAction::Submit), "send (queued if the agent is busy)"),
    bind(&[shift(K::Enter), ctrl('j'), alt(K::Enter)], Action::Composer(ComposerAction::Newline), "insert a newline"),
    bind(&[key(K::Up)], Action::Composer(ComposerAction::HistoryPrev), "previous prompt (on the first line)"),
    bind(&[key(K::Down)], Action::Composer(ComposerAction::HistoryNext), "next prompt (on the last line)"),
    bind(
        &[ctrl('g')],
        Action::Composer(ComposerAction::OpenEditor),
        "write the prompt in $VISUAL or $EDITOR; it comes back here to send",
    ),
    bind(&[ctrl('u')], Action::Composer(ComposerAction::DeleteToLineStart), "delete to the start of the line"),
    bind(&[ctrl('z')], Action::Composer(ComposerAction::Undo), "undo the last edit"),
    bind(&[ctrl('r')], Action::Composer(ComposerAction::SearchHistory), "search earlier prompts"),
    bind(&[key(K::Up), ctrl('p')], Action::Completion(CompletionAction::Prev), "previous suggestion"),
    bind(&[key(K::Down), ctrl('n')], Action::Completion(CompletionAction::Next), "next suggestion"),
    bind(&[key(K::Tab)], Action::Completion(CompletionAction::Accept), "take the suggestion"),
    bind(
        &[key(K::Enter)],
        Action::Completion(CompletionAction::Run),
        "take it; a command that needs nothing more runs",
    ),
    bind(&[key(K::Esc)], Action::Completion(CompletionAction::Dismiss), "close the list"),
    bind(&[ch('y')], Action::Approval(ApprovalAction::Approve), "approve this call once"),
    bind(
        &[ch('a')],
        Action::Approval(ApprovalAction::ApproveForSession),
        "approve it, and for the rest of the session what the rule shown covers (never every call of the tool)",
    ),
    bind(
        &[ch('p')],
        Action::Approval(ApprovalAction::ApproveForProject),
        "approve it, and save the rule shown for this project (.cairn/settings.local.toml)",
    ),
    bind(
        &[key(K::Tab)],
        Action::Approval(ApprovalAction::TogglePrefix),
        "switch the rule shown between exactly this call and its broader prefix (git push *, src/)",
    ),
    bind(&[ch('n')], Action::Approval(ApprovalAction::Deny), "deny, with an optional reason for the model"),
    bind(&[ch('d')], Action::Approval(ApprovalAction::ToggleDiffView), "toggle unified and side-by-side diff"),
    bind(&[key(K::Up), ch('k')], Action::Approval(ApprovalAction::ScrollUp), "scroll the preview up"),
    bind(&[key(K::Down), ch('j')], Action::Approval(ApprovalAction::ScrollDown), "scroll the preview down"),
    bind(&[key(K::Enter)], Action::Reason(ReasonAction::Confirm), "deny and send the reason"),
    bind(&[key(K::Esc)], Action::Reason(ReasonAction::Cancel), "back to the dialog"),
    bind(&[key(K::Esc), ch('q')], Action::Overlay(OverlayAction::Close), "close (in /rewind: one step back)"),
    bind(&[key(K::Up), ch('k')], Action::Overlay(OverlayAction::Prev), "previous item"),
    bind(&[key(K::Down), ch('j')], Action::Overlay(OverlayAction::Next), "next item"),
    bind(
        &[key(K::Enter)],
        Action::Overlay(OverlayAction::Open),
        "open: resume the session, view the memory, choose in /rewind",
    ),
    bind(&[ch('p')], Action::Overlay(OverlayAction::TogglePin), "pin or unpin the memory"),
    bind(
        &[ch('g')],
        Action::Overlay(OverlayAction::ToggleGlobal),
        "make the memory global (every project) or this project's own",
    ),
    bind(&[ch('d'), key(K::Delete)], Action::Overlay(OverlayAction::Delete), "delete the memory (press twice)"),
    bind(&[ch('/')], Action::Overlay(OverlayAction::Search), "search the output"),
    bind(&[ch('q'), key(K::Esc), key(K::Enter)], Action::Setup(SetupAction::Leave), "leave cairn"),
    bind(&[ctrl('r'), key(K::Up)], Action::HistorySearch(HistorySearchAction::Older), "an older match"),
    bind(&[ctrl('s'), key(K::Down)], Action::HistorySearch(HistorySearchAction::Newer), "a newer match"),
    bind(&[key(K::Enter), key(K::Tab)], Action::HistorySearch(HistorySearchAction::Accept), "take it into the prompt"),
    bind(&[key(K::Esc), ctrl('g')], Action::HistorySearch(HistorySearchAction::Cancel), "back to the prompt as it was"),
    bind(&[key(K::Enter), key(K::Up)], Action::Search(SearchAction::Older), "the previous (older) match"),
    bind(&[key(K::Down)], Action::Search(SearchAction::Newer), "the next (newer) match"),
    bind(&[key(K::Esc)], Action::Search(SearchAction::Close), "close the search, staying where it is"),
    bind(&[key(K::Enter)], Action::Plan(PlanAction::CarryOut), "switch to edit mode and carry the plan out"),
    bind(&[ctrl('g')], Action::Plan(PlanAction::EditPlan), "open the plan in $EDITOR first"),
    bind(&[key(K::Esc)], Action::Plan(PlanAction::Dismiss), "keep planning (typing does too)"),
    bind(&[ch('y')], Action::Trust(TrustAction::Trust), "trust the folder: its files are used, and the answer is kept"),
    bind(
        &[ch('n')],
        Action::Trust(TrustAction::Decline),
        "work without its files this time (nothing of them runs or is read)",
    ),
    bind(&[ch('q'), key(K::Esc), ctrl('c')], Action::Trust(TrustAction::Quit), "leave cairn; nothing ran"),
    bind(&[key(K::Up), ch('k')], Action::Trust(TrustAction::ScrollUp), "scroll the list up"),
    bind(&[key(K::Down), ch('j')], Action::Trust(TrustAction::ScrollDown), "scroll the list down"),
    bind(&[key(K::PageUp)], Action::Trust(TrustAction::PageUp), "scroll a page up"),
    bind(&[key(K::PageDown)], Action::Trust(TrustAction::PageDown), "scroll a page down"),
];

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

/// The action bound to `ev` in `context`.
pub fn lookup(context: KeyContext, ev: &KeyEvent) -> Option<Action> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    let k = normalise(ev);
    BINDINGS
        .iter()
        .filter(|b| b.context() == context)
        .find(|b| b.keys.iter().any(|bk| *bk == k || ch_eq(bk, &k)))
        .map(|b| b.action)
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

/// The first key bound to `action`, for hints in the interface.
pub fn hint(action: Action) -> String {
    BINDINGS.iter().find(|b| b.action == action).and_then(|b| b.keys.first()).map(describe).unwrap_or_default()
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
                    for k in a.keys {
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
