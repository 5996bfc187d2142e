//! The key map (SPEC §6): terminal-tool habits (`?` help, `q` quit, Tab focus,
//! j/k and arrows scroll) and single keys for every engine action. A key that
//! needs a value opens a prompt with a sensible default, so one press and
//! Enter does something useful. The help overlay and the key bar are drawn
//! from these tables, so they always say what the keys do.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::i18n::Lang;
use crate::ui::panes::PaneId;

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
    /// `f`: the focused pane fills the screen, and back.
    ToggleZoom,
    /// `P`: presentation, one or two panes above a large caption.
    TogglePresentation,
    /// `v` while presenting: the next pair of panes.
    CyclePresentPanes,
    /// `Esc`: close the help, else leave zoom, else leave presentation.
    Back,
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
    /// Replay: the next / previous step that has a caption.
    NextCaption,
    PrevCaption,
    /// Replay: take over live from this exact step (RaftScope's fork).
    Branch,
    /// Live: undo the last cluster step (screen-only steps after it are
    /// kept, docs/dashboard.md "Decisions").
    Undo,
    /// Live with `--listen`: drop the response of the next Produce (the
    /// lesson on idempotence; docs/kafka-protocol.md).
    DropProduceResponse,
    /// Replay: play faster / slower than the recorded pace.
    Faster,
    Slower,
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
    /// A member joins a group (chapter 9).
    JoinGroup,
    /// A member leaves its group.
    LeaveGroup,
    /// A member heartbeats at a generation.
    Heartbeat,
    /// The clock advanced just past a member's session deadline, so the
    /// coordinator expires it (an `advance_clock` action).
    Expire,
    /// The book's retention on a topic or partition (chapter 4).
    Retention,
    /// The book's key compaction on a topic or partition (chapter 4).
    Compact,
    /// A new topic: name, partitions, replication factor.
    CreateTopic,
    /// Replay: go to step N (no engine action).
    GotoStep,
}

/// What a key does while a prompt is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptEdit {
    /// Types a character at the cursor.
    Char(char),
    /// Deletes the character before the cursor.
    Backspace,
    /// Deletes the character under the cursor.
    Delete,
    /// ←, →, Home (or Ctrl-A), End (or Ctrl-E).
    Left,
    Right,
    Home,
    End,
    /// Ctrl-U: deletes from the start of the line to the cursor.
    ClearToStart,
    /// Ctrl-W: deletes the word before the cursor (and the spaces after it).
    DeleteWord,
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
    KeyHelp {
        keys: "f",
        en: "zoom: the focused pane fills the screen; f again to go back",
        zh: "放大：当前面板占满屏幕；再按 f 还原",
    },
    KeyHelp {
        keys: "P",
        en: "presentation: the step's panes above a large caption (v: other panes)",
        zh: "演示模式：本步的面板加大字说明（v 换面板）",
    },
    KeyHelp {
        keys: "Esc",
        en: "close the help; leave zoom, then presentation",
        zh: "关闭帮助；退出放大，再退出演示模式",
    },
];

/// Keys while a prompt is open.
pub const PROMPT_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "←/→",
        en: "move the cursor",
        zh: "移动光标",
    },
    KeyHelp {
        keys: "Home/End",
        en: "to the start/end (also Ctrl-A/Ctrl-E)",
        zh: "到行首/行尾（也可 Ctrl-A/Ctrl-E）",
    },
    KeyHelp {
        keys: "Bksp/Del",
        en: "delete before/under the cursor",
        zh: "删除光标前/光标处的字符",
    },
    KeyHelp {
        keys: "Ctrl-U/Ctrl-W",
        en: "delete to the start/the word before the cursor",
        zh: "删除行首到光标/光标前的一个词",
    },
    KeyHelp {
        keys: "Enter/Esc",
        en: "apply/cancel",
        zh: "执行/取消",
    },
];

/// Keys while the help is open: it is modal, nothing else reaches the
/// dashboard or the engine.
pub const HELP_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "?/Esc/q",
        en: "close the help",
        zh: "关闭帮助",
    },
    KeyHelp {
        keys: "j/k ↓/↑",
        en: "scroll the help",
        zh: "滚动帮助",
    },
];

/// Engine keys (live mode).
pub const LIVE_KEYS: &[KeyHelp] = &[
    KeyHelp {
        keys: "n",
        en: "new topic (name partitions replicas)",
        zh: "新建 topic（名称 分区数 副本数）",
    },
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
        keys: "r/R",
        en: "replicate: one fetch round / one broker",
        zh: "复制一轮 / 单个 broker 复制",
    },
    KeyHelp {
        keys: "t",
        en: "advance the clock",
        zh: "推进时钟",
    },
    KeyHelp {
        keys: "x/X",
        en: "crash and recover / commit, crash at a cut point",
        zh: "崩溃并恢复 / 在切点崩溃的提交",
    },
    KeyHelp {
        keys: "u",
        en: "undo the last cluster step",
        zh: "撤销上一个集群步骤",
    },
    KeyHelp {
        keys: "space",
        en: "after a crash: from its moment of death to the recovery",
        zh: "崩溃之后：从崩溃瞬间到恢复之后",
    },
    KeyHelp {
        keys: "T/L",
        en: "tear the journal's tail / a replica log's tail",
        zh: "撕裂事务日志尾部 / 副本日志尾部",
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
    KeyHelp {
        keys: "g/G",
        en: "a member joins / leaves a group",
        zh: "成员加入 / 离开消费组",
    },
    KeyHelp {
        keys: "h/E",
        en: "a member heartbeats / expires (clock past its deadline)",
        zh: "成员发送心跳 / 过期（时钟刚好越过它的会话期限）",
    },
    KeyHelp {
        keys: "d/C",
        en: "retention (old segments) / key compaction",
        zh: "保留策略（删除旧日志段）/ 按消息键压缩",
    },
    KeyHelp {
        keys: "D",
        en: "fault: drop the next Produce's response (--listen)",
        zh: "故障：丢弃下一个 Produce 的响应（--listen）",
    },
];

/// Keys while observing a cluster live (`mk-tui observe`): engine keys are
/// off, as the cluster is read, never written.
pub const OBSERVE_KEYS: &[KeyHelp] = &[KeyHelp {
    keys: "r",
    en: "refresh now (also every --interval ms)",
    zh: "立即刷新（另外每 --interval 毫秒自动刷新）",
}];

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
    KeyHelp {
        keys: "]/[",
        en: "next/previous captioned step (observed: a refresh where something happened)",
        zh: "下一个/上一个有说明的步骤（观察：有事发生的刷新）",
    },
    KeyHelp {
        keys: "b",
        en: "branch here: go live from this step",
        zh: "从此分叉：从这一步起实时操作",
    },
    KeyHelp {
        keys: "g",
        en: "go to step N",
        zh: "跳到第 N 步",
    },
    KeyHelp {
        keys: "+/-",
        en: "play faster/slower (x0.25 to x8)",
        zh: "播放加快/减慢（x0.25 到 x8）",
    },
];

/// What the key bar depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BarState {
    pub replay: bool,
    /// Replay is playing: `p` pauses.
    pub playing: bool,
    pub zoomed: bool,
    pub presenting: bool,
    /// A saved or observed state: nothing drives it, so no engine key.
    pub saved: bool,
    /// Observing a cluster live (`mk-tui observe`): `r` refreshes.
    pub observing: bool,
    /// The focused pane: live, the groups pane's keys lead the bar while
    /// it has the focus, and retention and compaction while the log has.
    pub focus: Option<PaneId>,
    /// A cast (`mk-tui export`): the bar names a cast player's keys
    /// (asciinema-player's and `asciinema play`'s), none of the dashboard's.
    pub player: bool,
}

/// The key bar of a cast: the keys asciinema-player and `asciinema play`
/// share (space, `.` one frame while paused, `]` next marker, one per
/// caption), and `[`, the web player's previous marker.
pub const PLAYER_BAR: [(&str, &str); 3] = [
    ("space", "player_pause"),
    ("[ ]", "player_chapter"),
    (".", "player_frame"),
];

/// The key bar: the few keys that matter most now, as (key, label key).
/// While playing, `p` says "pause"; zoomed or presenting, the way back
/// comes first.
pub fn key_bar(state: BarState) -> Vec<(&'static str, &'static str)> {
    if state.player {
        return PLAYER_BAR.to_vec();
    }
    let mut out = Vec::new();
    if state.zoomed {
        out.push(("f", "unzoom"));
    } else if state.presenting {
        out.push(("P", "end_present"));
        out.push(("v", "present_panes"));
    }
    if state.replay {
        let play = if state.playing { "pause" } else { "play" };
        out.extend([("space", "next"), ("←", "back"), ("p", play)]);
        if !state.zoomed {
            out.push(("f", "zoom"));
        }
        if !state.presenting {
            out.push(("P", "present"));
        }
        out.extend([("?", "help_short"), ("q", "quit")]);
    } else if state.saved || state.observing {
        if state.observing {
            out.push(("r", "refresh"));
        }
        if !state.zoomed {
            out.push(("f", "zoom"));
        }
        if !state.presenting {
            out.push(("P", "present"));
        }
        out.extend([("?", "help_short"), ("q", "quit")]);
    } else {
        out.extend(match state.focus {
            Some(PaneId::Groups) => &GROUPS_BAR[..],
            Some(PaneId::Log) => &LOG_BAR[..],
            _ => &LIVE_BAR[..],
        });
    }
    out
}

/// The live key bar while the groups pane has the focus: chapter 9's
/// steps first.
const GROUPS_BAR: [(&str, &str); 8] = [
    ("g", "join"),
    ("G", "leave"),
    ("h", "heartbeat"),
    ("E", "expire"),
    ("t", "clock"),
    ("p", "produce"),
    ("?", "help_short"),
    ("q", "quit"),
];

/// The live key bar while the log pane has the focus: writing and
/// replicating (the log is the first pane of `--listen`'s layout, where
/// `r` matters most), then chapter 4's cleanup before the clock that
/// ages the segments.
const LOG_BAR: [(&str, &str); 8] = [
    ("p", "produce"),
    ("r", "replicate"),
    ("d", "retention"),
    ("C", "compact"),
    ("t", "clock"),
    ("x", "crash"),
    ("?", "help_short"),
    ("q", "quit"),
];

/// The live key bar.
const LIVE_BAR: [(&str, &str); 10] = [
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
];

/// The command for a key press in a mode.
pub fn command(key: KeyEvent, replay: bool) -> Option<KeyCommand> {
    use KeyCommand as C;
    if is_ctrl_c(key) {
        return Some(C::Quit);
    }
    if is_chord(key) {
        return None;
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
        KeyCode::Char('f') => Some(C::ToggleZoom),
        KeyCode::Char('P') => Some(C::TogglePresentation),
        KeyCode::Char('v') => Some(C::CyclePresentPanes),
        KeyCode::Esc => Some(C::Back),
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
            KeyCode::Char(']') => Some(C::NextCaption),
            KeyCode::Char('[') => Some(C::PrevCaption),
            KeyCode::Char('b') => Some(C::Branch),
            KeyCode::Char('g') => Some(C::Prompt(PromptKind::GotoStep)),
            KeyCode::Char('+') | KeyCode::Char('=') => Some(C::Faster),
            KeyCode::Char('-') => Some(C::Slower),
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
        KeyCode::Char('g') => prompt(PromptKind::JoinGroup),
        KeyCode::Char('G') => prompt(PromptKind::LeaveGroup),
        KeyCode::Char('h') => prompt(PromptKind::Heartbeat),
        KeyCode::Char('E') => prompt(PromptKind::Expire),
        KeyCode::Char('d') => prompt(PromptKind::Retention),
        KeyCode::Char('C') => prompt(PromptKind::Compact),
        KeyCode::Char('n') => prompt(PromptKind::CreateTopic),
        KeyCode::Char('r') => Some(C::ReplicateAll),
        KeyCode::Char('x') => Some(C::Crash),
        KeyCode::Char('u') => Some(C::Undo),
        KeyCode::Char('D') => Some(C::DropProduceResponse),
        // After a crash: from its moment of death to the recovery.
        KeyCode::Char(' ') => Some(C::NextStep),
        _ => None,
    }
}

/// The command for a key press while the help is open: it is modal, so
/// only closing it, scrolling it and Ctrl-C do anything.
pub fn help_command(key: KeyEvent) -> Option<KeyCommand> {
    use KeyCommand as C;
    if is_ctrl_c(key) {
        return Some(C::Quit);
    }
    if is_chord(key) {
        return None;
    }
    match key.code {
        KeyCode::Char('?') => Some(C::ToggleHelp),
        KeyCode::Esc | KeyCode::Char('q') => Some(C::Back),
        KeyCode::Char('j') | KeyCode::Down => Some(C::ScrollDown),
        KeyCode::Char('k') | KeyCode::Up => Some(C::ScrollUp),
        _ => None,
    }
}

/// The edit for a key press in an open prompt. Control and Alt chords type
/// nothing (Ctrl-C is [`KeyCommand::Quit`] in [`command`]); Ctrl-U, Ctrl-W,
/// Ctrl-A and Ctrl-E edit as in a shell.
pub fn prompt_edit(key: KeyEvent) -> Option<PromptEdit> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('u') => Some(PromptEdit::ClearToStart),
            KeyCode::Char('w') => Some(PromptEdit::DeleteWord),
            KeyCode::Char('a') => Some(PromptEdit::Home),
            KeyCode::Char('e') => Some(PromptEdit::End),
            _ => None,
        };
    }
    match key.code {
        KeyCode::Esc => Some(PromptEdit::Cancel),
        KeyCode::Enter => Some(PromptEdit::Submit),
        KeyCode::Backspace => Some(PromptEdit::Backspace),
        KeyCode::Delete => Some(PromptEdit::Delete),
        KeyCode::Left => Some(PromptEdit::Left),
        KeyCode::Right => Some(PromptEdit::Right),
        KeyCode::Home => Some(PromptEdit::Home),
        KeyCode::End => Some(PromptEdit::End),
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

/// True for a Control or Alt chord. Outside prompts none but Ctrl-C does
/// anything: a chord is not its bare letter (Ctrl-U, which clears a prompt,
/// pressed once a prompt has closed must not undo a step; Ctrl-X must not
/// crash the cluster).
fn is_chord(key: KeyEvent) -> bool {
    key.modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
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
            for part in k.keys.split('/') {
                let c = if part == "space" {
                    ' '
                } else {
                    part.chars().next().unwrap()
                };
                assert!(
                    command(key(KeyCode::Char(c)), false).is_some(),
                    "{part} of {}",
                    k.keys
                );
            }
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
        // Live, space goes from a crash's moment of death to its recovery.
        assert_eq!(
            command(key(KeyCode::Char(' ')), false),
            Some(KeyCommand::NextStep)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(command(ctrl_c, false), Some(KeyCommand::Quit));
    }

    /// A Control or Alt chord does not do its bare key's job outside a
    /// prompt, live, in a replay or in the help; Shift still types capitals.
    #[test]
    fn chords_are_not_their_bare_keys() {
        let chord = |c, m| KeyEvent::new(KeyCode::Char(c), m);
        for c in ['u', 'x', 'r', 'a', 'c', 'b', 'p', 'q', 'j', ' '] {
            assert!(
                command(key(KeyCode::Char(c)), false).is_some(),
                "bare {c:?}"
            );
        }
        for replay in [false, true] {
            for c in ['u', 'x', 'r', 'a', 'b', 'p', 'q', 'j', ' ', 'i', 'f'] {
                for m in [KeyModifiers::CONTROL, KeyModifiers::ALT] {
                    assert_eq!(
                        command(chord(c, m), replay),
                        None,
                        "{m:?}-{c} replay={replay}"
                    );
                }
            }
            assert_eq!(
                command(KeyEvent::new(KeyCode::Down, KeyModifiers::ALT), replay),
                None
            );
        }
        for c in ['q', 'j', 'k', '?'] {
            assert_eq!(
                help_command(chord(c, KeyModifiers::CONTROL)),
                None,
                "help Ctrl-{c}"
            );
            assert!(help_command(key(KeyCode::Char(c))).is_some(), "help {c}");
        }
        let ctrl_c = chord('c', KeyModifiers::CONTROL);
        assert_eq!(command(ctrl_c, true), Some(KeyCommand::Quit));
        assert_eq!(help_command(ctrl_c), Some(KeyCommand::Quit));
        assert_eq!(
            command(chord('X', KeyModifiers::SHIFT), false),
            command(key(KeyCode::Char('X')), false)
        );
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
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(prompt_edit(ctrl('u')), Some(PromptEdit::ClearToStart));
        assert_eq!(prompt_edit(ctrl('w')), Some(PromptEdit::DeleteWord));
        assert_eq!(prompt_edit(ctrl('a')), Some(PromptEdit::Home));
        assert_eq!(prompt_edit(ctrl('e')), Some(PromptEdit::End));
        assert_eq!(prompt_edit(ctrl('x')), None);
        assert_eq!(prompt_edit(key(KeyCode::Left)), Some(PromptEdit::Left));
        assert_eq!(prompt_edit(key(KeyCode::Right)), Some(PromptEdit::Right));
        assert_eq!(prompt_edit(key(KeyCode::Home)), Some(PromptEdit::Home));
        assert_eq!(prompt_edit(key(KeyCode::End)), Some(PromptEdit::End));
        assert_eq!(prompt_edit(key(KeyCode::Delete)), Some(PromptEdit::Delete));
        let shifted = KeyEvent::new(KeyCode::Char('X'), KeyModifiers::SHIFT);
        assert_eq!(prompt_edit(shifted), Some(PromptEdit::Char('X')));
        assert_eq!(prompt_edit(key(KeyCode::Tab)), None);
    }

    #[test]
    fn the_help_lets_through_only_closing_scrolling_and_quitting() {
        assert_eq!(
            help_command(key(KeyCode::Char('?'))),
            Some(KeyCommand::ToggleHelp)
        );
        assert_eq!(help_command(key(KeyCode::Esc)), Some(KeyCommand::Back));
        assert_eq!(
            help_command(key(KeyCode::Char('q'))),
            Some(KeyCommand::Back)
        );
        assert_eq!(
            help_command(key(KeyCode::Char('j'))),
            Some(KeyCommand::ScrollDown)
        );
        assert_eq!(help_command(key(KeyCode::Up)), Some(KeyCommand::ScrollUp));
        for c in "xXpbscartTLzZeiJKf P\t".chars() {
            assert_eq!(help_command(key(KeyCode::Char(c))), None, "{c:?}");
        }
        for code in [KeyCode::Enter, KeyCode::Tab, KeyCode::Left, KeyCode::Right] {
            assert_eq!(help_command(key(code)), None, "{code:?}");
        }
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(help_command(ctrl_c), Some(KeyCommand::Quit));
    }

    #[test]
    fn group_and_cleanup_keys_open_their_prompts_live_only() {
        for (c, kind) in [
            ('g', PromptKind::JoinGroup),
            ('G', PromptKind::LeaveGroup),
            ('h', PromptKind::Heartbeat),
            ('E', PromptKind::Expire),
            ('d', PromptKind::Retention),
            ('C', PromptKind::Compact),
            ('n', PromptKind::CreateTopic),
        ] {
            assert_eq!(
                command(key(KeyCode::Char(c)), false),
                Some(KeyCommand::Prompt(kind)),
                "{c}"
            );
            assert!(
                LIVE_KEYS
                    .iter()
                    .any(|k| k.keys.split('/').any(|k| k == c.to_string())),
                "{c} is in the help"
            );
            assert_ne!(
                command(key(KeyCode::Char(c)), true),
                Some(KeyCommand::Prompt(kind)),
                "replay: {c} drives no engine"
            );
        }
        // Replay keeps `g` for go to step.
        assert_eq!(
            command(key(KeyCode::Char('g')), true),
            Some(KeyCommand::Prompt(PromptKind::GotoStep))
        );
    }

    #[test]
    fn the_focused_pane_chooses_the_live_bar() {
        let keys = |focus| -> Vec<&str> {
            key_bar(BarState {
                focus,
                ..BarState::default()
            })
            .into_iter()
            .map(|(k, _)| k)
            .collect()
        };
        assert_eq!(
            keys(Some(PaneId::Groups))[..4],
            ["g", "G", "h", "E"],
            "join, leave, heartbeat, expire lead"
        );
        assert_eq!(keys(Some(PaneId::Log))[..4], ["p", "r", "d", "C"]);
        assert_eq!(keys(Some(PaneId::Journal)), keys(None));
        for focus in [Some(PaneId::Groups), Some(PaneId::Log), None] {
            let k = keys(focus);
            assert_eq!(k[k.len() - 2..], ["?", "q"], "{focus:?}");
            for c in k.iter().filter(|k| !["?", "q"].contains(k)) {
                let c = c.chars().next().unwrap();
                assert!(
                    matches!(command(key(KeyCode::Char(c)), false), Some(cmd) if cmd != KeyCommand::Quit),
                    "{c} does something"
                );
            }
        }
        // Replay and saved bars do not change with the focus.
        let replay = |focus| BarState {
            replay: true,
            focus,
            ..BarState::default()
        };
        assert_eq!(key_bar(replay(Some(PaneId::Groups))), key_bar(replay(None)));
    }

    #[test]
    fn a_cast_s_key_bar_names_only_the_player_s_keys() {
        let cast = BarState {
            replay: true,
            player: true,
            ..BarState::default()
        };
        let keys: Vec<&str> = key_bar(cast).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["space", "[ ]", "."]);
        for (_, label) in key_bar(cast) {
            assert_ne!(
                crate::ui::i18n::Lang::Zh.t(label),
                label,
                "{label} is translated"
            );
        }
    }

    #[test]
    fn the_key_bar_says_pause_while_playing() {
        let labels =
            |s: BarState| -> Vec<&str> { key_bar(s).into_iter().map(|(_, l)| l).collect() };
        let replay = BarState {
            replay: true,
            ..BarState::default()
        };
        assert!(labels(replay).contains(&"play") && !labels(replay).contains(&"pause"));
        let playing = BarState {
            playing: true,
            ..replay
        };
        assert!(labels(playing).contains(&"pause") && !labels(playing).contains(&"play"));
        let zoomed = BarState {
            zoomed: true,
            ..BarState::default()
        };
        assert_eq!(key_bar(zoomed)[0], ("f", "unzoom"));
        assert_eq!(key_bar(BarState::default())[0], ("p", "produce"));
        // A saved or observed state offers no key that drives an engine.
        let saved = BarState {
            saved: true,
            ..BarState::default()
        };
        assert_eq!(labels(saved), ["zoom", "present", "help_short", "quit"]);
        let observing = BarState {
            observing: true,
            ..BarState::default()
        };
        assert_eq!(
            labels(observing),
            ["refresh", "zoom", "present", "help_short", "quit"]
        );
    }
}
