//! The key map (SPEC §6): terminal-tool habits (`?` help, `q` quit, Tab focus,
//! j/k and arrows scroll) and single keys for every engine action. A key that
//! needs a value opens a prompt with a sensible default, so one press and
//! Enter does something useful. The help overlay and the key bar are drawn
//! from these tables, so they always say what the keys do.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::i18n::Lang;

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCommand {
    Quit,
    ToggleHelp,
    /// Show batches as read_committed or as read_uncommitted sees them.
    ToggleIsolation,
    FocusNext,
    FocusPrev,
    ScrollUp,
    ScrollDown,
    SelectPrev,
    SelectNext,
    /// Engine keys (live mode): open the prompt for this action.
    Prompt(PromptKind),
    /// Engine keys without a value.
    ReplicateAll,
    Crash,
    /// Replay mode.
    NextStep,
    PrevStep,
    PlayPause,
    FirstStep,
    LastStep,
}

/// Engine actions that take a value from a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Produce,
    Begin,
    Send,
    SendOffsets,
    Commit,
    Abort,
    CrashAtCut,
    ReplicateBroker,
    AdvanceClock,
    TearJournal,
    TearLog,
    StopBroker,
    StartBroker,
    Promote,
}

/// What a key does while a prompt is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptEdit {
    /// Types a character.
    Char(char),
    Backspace,
    /// Enter: apply the prompt, or show why not.
    Submit,
    /// Esc: close the prompt, applying nothing.
    Cancel,
}

/// One line of the help overlay.
pub struct KeyHelp {
    pub keys: &'static str,
    pub en: &'static str,
    pub zh: &'static str,
}

impl KeyHelp {
    /// The description in `lang`.
    pub fn text(&self, lang: Lang) -> &'static str {
        if lang == Lang::Zh { self.zh } else { self.en }
    }
}

/// Keys in every mode.
pub const COMMON_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "?",
        en: "help",
        zh: "帮助",
    },
    KeyHelp {
        keys: "q",
        en: "quit",
        zh: "退出",
    },
    KeyHelp {
        keys: "Tab/S-Tab",
        en: "focus next/previous pane",
        zh: "切换面板",
    },
    KeyHelp {
        keys: "j/k ↓/↑",
        en: "scroll",
        zh: "滚动",
    },
    KeyHelp {
        keys: "J/K",
        en: "select next/previous batch",
        zh: "选择批次",
    },
    KeyHelp {
        keys: "i",
        en: "isolation view: read_committed / read_uncommitted",
        zh: "隔离级别视角：read_committed / read_uncommitted",
    },
];

/// Engine keys (live mode).
pub const LIVE_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "p",
        en: "produce (topic value acks=…)",
        zh: "生产消息",
    },
    KeyHelp {
        keys: "b",
        en: "begin a transaction",
        zh: "开启事务",
    },
    KeyHelp {
        keys: "s",
        en: "send in a transaction",
        zh: "事务内发送",
    },
    KeyHelp {
        keys: "o",
        en: "send offsets (stage)",
        zh: "暂存 offset",
    },
    KeyHelp {
        keys: "c",
        en: "commit",
        zh: "提交",
    },
    KeyHelp {
        keys: "a",
        en: "abort",
        zh: "中止",
    },
    KeyHelp {
        keys: "r",
        en: "replicate: one fetch round",
        zh: "复制一轮",
    },
    KeyHelp {
        keys: "R",
        en: "replicate one broker",
        zh: "单个 broker 复制",
    },
    KeyHelp {
        keys: "t",
        en: "advance the clock",
        zh: "推进时钟",
    },
    KeyHelp {
        keys: "x",
        en: "crash and recover",
        zh: "崩溃并恢复",
    },
    KeyHelp {
        keys: "X",
        en: "commit, crash at a cut point",
        zh: "在切点崩溃的提交",
    },
    KeyHelp {
        keys: "T",
        en: "tear the journal's tail",
        zh: "撕裂 journal 尾部",
    },
    KeyHelp {
        keys: "L",
        en: "tear a replica log's tail",
        zh: "撕裂副本日志尾部",
    },
    KeyHelp {
        keys: "z/Z",
        en: "stop/start a broker",
        zh: "停止/启动 broker",
    },
    KeyHelp {
        keys: "e",
        en: "promote a replica (elect)",
        zh: "提升副本为 leader",
    },
];

/// Replay keys.
pub const REPLAY_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "space/→",
        en: "next step",
        zh: "下一步",
    },
    KeyHelp {
        keys: "←",
        en: "previous step",
        zh: "上一步",
    },
    KeyHelp {
        keys: "p",
        en: "play/pause at recorded pace",
        zh: "按录制节奏播放/暂停",
    },
    KeyHelp {
        keys: "Home/End",
        en: "first/last step",
        zh: "第一步/最后一步",
    },
];

/// The key bar: the few keys that matter most now.
pub fn key_bar(replay: bool) -> &'static [(&'static str, &'static str)] {
    if replay {
        &[
            ("space", "next"),
            ("←", "back"),
            ("p", "play"),
            ("?", "help_short"),
            ("q", "quit"),
        ]
    } else {
        &[
            ("p", "produce"),
            ("b", "begin"),
            ("s", "send"),
            ("c", "commit"),
            ("a", "abort"),
            ("r", "replicate"),
            ("t", "clock"),
            ("x", "crash"),
            ("?", "help_short"),
            ("q", "quit"),
        ]
    }
}

/// The command for a key press in a mode.
pub fn command(key: KeyEvent, replay: bool) -> Option<KeyCommand> {
    use KeyCommand as C;
    if is_ctrl_c(key) {
        return Some(C::Quit);
    }
    let common = match key.code {
        KeyCode::Char('q') => Some(C::Quit),
        KeyCode::Char('?') => Some(C::ToggleHelp),
        KeyCode::Char('i') => Some(C::ToggleIsolation),
        KeyCode::Tab => Some(C::FocusNext),
        KeyCode::BackTab => Some(C::FocusPrev),
        KeyCode::Char('j') | KeyCode::Down => Some(C::ScrollDown),
        KeyCode::Char('k') | KeyCode::Up => Some(C::ScrollUp),
        KeyCode::Char('J') => Some(C::SelectNext),
        KeyCode::Char('K') => Some(C::SelectPrev),
        _ => None,
    };
    if common.is_some() {
        return common;
    }
    if replay {
        return match key.code {
            KeyCode::Char(' ') | KeyCode::Right => Some(C::NextStep),
            KeyCode::Left => Some(C::PrevStep),
            KeyCode::Char('p') => Some(C::PlayPause),
            KeyCode::Home => Some(C::FirstStep),
            KeyCode::End => Some(C::LastStep),
            _ => None,
        };
    }
    let prompt = |kind| Some(C::Prompt(kind));
    match key.code {
        KeyCode::Char('p') => prompt(PromptKind::Produce),
        KeyCode::Char('b') => prompt(PromptKind::Begin),
        KeyCode::Char('s') => prompt(PromptKind::Send),
        KeyCode::Char('o') => prompt(PromptKind::SendOffsets),
        KeyCode::Char('c') => prompt(PromptKind::Commit),
        KeyCode::Char('a') => prompt(PromptKind::Abort),
        KeyCode::Char('X') => prompt(PromptKind::CrashAtCut),
        KeyCode::Char('R') => prompt(PromptKind::ReplicateBroker),
        KeyCode::Char('t') => prompt(PromptKind::AdvanceClock),
        KeyCode::Char('T') => prompt(PromptKind::TearJournal),
        KeyCode::Char('L') => prompt(PromptKind::TearLog),
        KeyCode::Char('z') => prompt(PromptKind::StopBroker),
        KeyCode::Char('Z') => prompt(PromptKind::StartBroker),
        KeyCode::Char('e') => prompt(PromptKind::Promote),
        KeyCode::Char('r') => Some(C::ReplicateAll),
        KeyCode::Char('x') => Some(C::Crash),
        _ => None,
    }
}

/// The edit for a key press in an open prompt. Control and Alt chords type
/// nothing (Ctrl-C is [`KeyCommand::Quit`] in [`command`]).
pub fn prompt_edit(key: KeyEvent) -> Option<PromptEdit> {
    match key.code {
        KeyCode::Esc => Some(PromptEdit::Cancel),
        KeyCode::Enter => Some(PromptEdit::Submit),
        KeyCode::Backspace => Some(PromptEdit::Backspace),
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(PromptEdit::Char(c))
        }
        _ => None,
    }
}

/// True for Ctrl-C, which quits in every mode, a prompt open or not.
pub fn is_ctrl_c(key: KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn every_live_key_in_the_help_has_a_command() {
        for k in LIVE_KEYS {
            let first = k.keys.split('/').next().unwrap();
            let c = first.chars().next().unwrap();
            assert!(
                command(key(KeyCode::Char(c)), false).is_some(),
                "{}",
                k.keys
            );
        }
        assert_eq!(
            command(key(KeyCode::Char('p')), true),
            Some(KeyCommand::PlayPause)
        );
        assert_eq!(
            command(key(KeyCode::Char('p')), false),
            Some(KeyCommand::Prompt(PromptKind::Produce))
        );
        assert_eq!(
            command(key(KeyCode::Char(' ')), true),
            Some(KeyCommand::NextStep)
        );
        assert_eq!(command(key(KeyCode::Char(' ')), false), None);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(command(ctrl_c, false), Some(KeyCommand::Quit));
    }

    #[test]
    fn prompt_keys_edit_and_chords_type_nothing() {
        assert_eq!(
            prompt_edit(key(KeyCode::Char('"'))),
            Some(PromptEdit::Char('"'))
        );
        assert_eq!(prompt_edit(key(KeyCode::Enter)), Some(PromptEdit::Submit));
        assert_eq!(prompt_edit(key(KeyCode::Esc)), Some(PromptEdit::Cancel));
        assert_eq!(
            prompt_edit(key(KeyCode::Backspace)),
            Some(PromptEdit::Backspace)
        );
        let alt_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT);
        assert_eq!(prompt_edit(alt_x), None);
        let shifted = KeyEvent::new(KeyCode::Char('X'), KeyModifiers::SHIFT);
        assert_eq!(prompt_edit(shifted), Some(PromptEdit::Char('X')));
        assert_eq!(prompt_edit(key(KeyCode::Tab)), None);
    }
}
