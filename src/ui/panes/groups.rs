//! The groups pane (E15, chapter 9): each consumer group's state and
//! generation; its members with their assignment and session deadline;
//! per partition the owner, the committed offset against the high
//! watermark (the book's `visible_end`) and the lag; and what the last
//! rebalance moved, marked `▸`.
//!
//! Every colour has its word or glyph beside it, so `NO_COLOR` loses
//! nothing: a lag of 0 is `✓`, a lag above 0 is `…` (still to commit); a
//! member whose client still holds an older generation says so (`⚠`); a
//! partition the last rebalance moved carries `▸` in the gutter. Under
//! Kafka's classic protocol (`--rules kafka`) the leader's row says
//! `leader`, and a member in a rebalance says where it stands (`must
//! rejoin`, `◷ rejoined`, `owes sync`, `◷ awaits assignment`; `◷` (a clock, in DejaVu Sans Mono as `⧗` is not): it
//! waits on others), its partitions `pending` until its sync brings them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, column, column_width, frame, lines, marks};
use crate::session::snapshot::Snapshot;
use crate::session::snapshot::groups::{
    GroupPartitionSnapshot, GroupSnapshot, MemberRebalance, MemberSnapshot,
};
use crate::ui::theme::Theme;

/// The widest a member or partition name column grows before its names
/// are clipped (docs/dashboard.md "Long names").
const NAME_MAX: usize = 16;

/// How many rows the pane has for `view`: a group's heading, its members,
/// the partition table's heading and rows, the last rebalance's heading
/// and moves, and a blank row between groups (one row saying there is no
/// group). What [`super::scroll_limit`] counts.
pub fn row_count(view: &Snapshot) -> usize {
    if view.groups.is_empty() {
        return 1;
    }
    let per_group = |g: &GroupSnapshot| {
        1 + g.members.len()
            + usize::from(!g.partitions.is_empty())
            + g.partitions.len()
            + g.last_rebalance.as_ref().map_or(0, |r| 1 + r.moved.len())
    };
    view.groups.iter().map(per_group).sum::<usize>() + view.groups.len() - 1
}

/// Draws the pane; `ctx.scroll` skips rows from the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Groups, area, buf);
    if inner.is_empty() {
        return;
    }
    let all = rows(view, ctx, usize::from(inner.width));
    let skip = ctx.scroll.min(all.len().saturating_sub(1));
    let shown = (all.len() - skip).min(usize::from(inner.height));
    marks(ctx, area, skip, all.len() - skip - shown, buf);
    lines(all.into_iter().skip(skip).take(shown).collect(), inner, buf);
}

/// The first of `forms` (longest first) that fits in `width` cells, else
/// the last: a narrow pane says less on purpose rather than cutting the
/// part that matters.
fn fit(forms: Vec<Line<'static>>, width: usize) -> Line<'static> {
    let last = forms.len() - 1;
    forms
        .into_iter()
        .enumerate()
        .find(|(i, l)| l.width() <= width || *i == last)
        .map(|(_, l)| l)
        .expect("at least one form")
}

/// Every row of the pane, top down, for a pane `width` cells wide.
fn rows(view: &Snapshot, ctx: &PaneContext, width: usize) -> Vec<Line<'static>> {
    if view.groups.is_empty() {
        // An observed cluster's members are not read (only its committed
        // offsets, in the offsets pane): "none" would be a claim.
        let key = if view.unavailable.is_empty() {
            "no_groups"
        } else {
            "groups_not_observed"
        };
        return vec![Line::styled(ctx.lang.t(key), ctx.theme.dim())];
    }
    let mut out = Vec::new();
    for (i, g) in view.groups.iter().enumerate() {
        if i > 0 {
            out.push(Line::default());
        }
        out.extend(group_rows(g, view, ctx, width));
    }
    out
}

/// One group's rows.
fn group_rows(
    g: &GroupSnapshot,
    view: &Snapshot,
    ctx: &PaneContext,
    width: usize,
) -> Vec<Line<'static>> {
    let (t, theme) = (|k| ctx.lang.t(k), &ctx.theme);
    let state_style = match g.state.as_str() {
        "stable" => theme.good(),
        "preparing_rebalance" | "completing_rebalance" => theme.waiting(),
        _ => theme.dim(),
    };
    let generation = ctx.lang.pick(
        format!("generation {}", g.generation),
        format!("第 {} 代", g.generation),
    );
    let session = ctx.lang.pick(
        format!("session {} ms", g.session_timeout_ms),
        format!("会话超时 {} ms", g.session_timeout_ms),
    );
    let head = vec![
        Span::styled(g.group.clone(), theme.strong()),
        Span::raw(" · "),
        Span::styled(g.state.clone(), state_style),
        Span::raw(format!(" · {generation}")),
    ];
    let mut with_session = head.clone();
    with_session.extend([Span::raw(" · "), Span::styled(session, theme.dim())]);
    let mut out = vec![fit(vec![Line::from(with_session), Line::from(head)], width)];
    let name_w = column_width(
        g.members
            .iter()
            .map(|m| m.member.as_str())
            .chain(g.partitions.iter().filter_map(|p| p.owner.as_deref())),
        6,
        NAME_MAX,
    );
    out.extend(
        g.members
            .iter()
            .map(|m| member_row(m, g, view.clock_ms, name_w, ctx, width)),
    );
    if !g.partitions.is_empty() {
        out.extend(partition_table(g, name_w, ctx));
    }
    if let Some(r) = &g.last_rebalance {
        let head = if r.moved.is_empty() {
            ctx.lang.pick(
                format!("last rebalance, generation {}: nothing moved", r.generation),
                format!("上次重平衡（第 {} 代）：没有分区移动", r.generation),
            )
        } else {
            ctx.lang.pick(
                format!("last rebalance, generation {}, moved:", r.generation),
                format!("上次重平衡（第 {} 代）移动了：", r.generation),
            )
        };
        out.push(Line::styled(head, theme.strong()));
        let nobody = t("nobody");
        out.extend(r.moved.iter().map(|m| {
            Line::from(vec![
                Span::styled(format!("{} ", Theme::CHANGED_GLYPH), theme.changed_mark()),
                Span::styled(
                    format!(
                        "{} {} → {}",
                        m.partition,
                        m.from.as_deref().unwrap_or(nobody),
                        m.to.as_deref().unwrap_or(nobody)
                    ),
                    theme.changed(),
                ),
            ])
        }));
    }
    out
}

/// A member: its name, its session deadline (and how far the clock is
/// from it), a warning when its client holds an older generation than the
/// group's, and its assignment. Where that does not fit, the assignment
/// goes first (the table's owner column says it too), then the warning
/// shortens to `⚠ gen N`.
fn member_row(
    m: &MemberSnapshot,
    g: &GroupSnapshot,
    clock_ms: u64,
    name_w: usize,
    ctx: &PaneContext,
    width: usize,
) -> Line<'static> {
    let theme = &ctx.theme;
    let left = m.deadline_ms.saturating_sub(clock_ms);
    let deadline = ctx.lang.pick(
        format!("until {} (+{left})", m.deadline_ms),
        format!("截止 {}（剩 {left}）", m.deadline_ms),
    );
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(column(&m.member, name_w), theme.strong()),
        Span::raw(" "),
    ];
    if g.leader.as_deref() == Some(m.member.as_str()) {
        spans.push(Span::styled("leader ".to_string(), theme.strong()));
    }
    if let Some(r) = m.rebalance {
        spans.push(Span::styled(
            format!("{} ", rebalance_words(r, ctx)),
            theme.waiting(),
        ));
    }
    spans.push(Span::styled(deadline, theme.dim()));
    let held = m.client_generation.filter(|c| *c < g.generation);
    let warning = |long: bool| {
        held.map(|held| {
            let text = match (long, ctx.lang.zh()) {
                (true, false) => format!(" ⚠ holds generation {held}"),
                (true, true) => format!(" ⚠ 仍持第 {held} 代"),
                (false, false) => format!(" ⚠ gen {held}"),
                (false, true) => format!(" ⚠ 第 {held} 代"),
            };
            Span::styled(text, theme.waiting())
        })
    };
    let pending = matches!(
        m.rebalance,
        Some(MemberRebalance::OwesSync | MemberRebalance::AwaitsAssignment)
    ) || (m.rebalance == Some(MemberRebalance::Rejoined) && m.assignment.is_empty());
    let owns = if pending {
        ctx.lang.pick("pending".into(), "待分配".into())
    } else if m.assignment.is_empty() {
        ctx.lang.t("nothing_assigned").to_string()
    } else {
        m.assignment.join(" ")
    };
    let mut full = spans.clone();
    full.extend(warning(true));
    let without = Line::from(full.clone());
    full.push(Span::raw(format!(" : {owns}")));
    spans.extend(warning(false));
    fit(vec![Line::from(full), without, Line::from(spans)], width)
}

/// A classic member's rebalance status, in words (`◷` marks the ones that
/// wait on someone else).
fn rebalance_words(r: MemberRebalance, ctx: &PaneContext) -> String {
    match r {
        MemberRebalance::MustRejoin => ctx.lang.pick("must rejoin".into(), "须重新加入".into()),
        MemberRebalance::Rejoined => ctx.lang.pick("◷ rejoined".into(), "◷ 已重新加入".into()),
        MemberRebalance::OwesSync => ctx.lang.pick("owes sync".into(), "待同步".into()),
        MemberRebalance::AwaitsAssignment => ctx
            .lang
            .pick("◷ awaits assignment".into(), "◷ 等待分配".into()),
    }
}

/// The partition table: heading, then per partition the gutter (`▸` when
/// the last rebalance moved it), name, owner, committed offset, high
/// watermark and lag with its glyph.
fn partition_table(g: &GroupSnapshot, name_w: usize, ctx: &PaneContext) -> Vec<Line<'static>> {
    let (t, theme) = (|k| ctx.lang.t(k), &ctx.theme);
    let part_w = column_width(
        g.partitions
            .iter()
            .map(|p| p.partition.as_str())
            .chain(std::iter::once(t("partition"))),
        9,
        NAME_MAX,
    );
    let owner_w = column_width(std::iter::once(t("owner")), name_w, NAME_MAX);
    let num_w = |key: &'static str, values: &mut dyn Iterator<Item = i64>| {
        let w = values.map(|v| v.to_string().len()).max().unwrap_or(1);
        w.max(Span::raw(t(key)).width())
    };
    let committed_w = num_w(
        "committed",
        &mut g.partitions.iter().map(|p| p.committed.unwrap_or(0)),
    );
    let hw_w = num_w("HW", &mut g.partitions.iter().map(|p| p.high_watermark));
    let head = format!(
        "  {} {} {} {} {}",
        column(t("partition"), part_w),
        column(t("owner"), owner_w),
        right(t("committed"), committed_w),
        right("HW", hw_w),
        t("lag"),
    );
    let moved = |p: &GroupPartitionSnapshot| {
        g.last_rebalance
            .as_ref()
            .is_some_and(|r| r.moved.iter().any(|m| m.partition == p.partition))
    };
    let mut out = vec![Line::styled(head, theme.strong().underlined())];
    for p in &g.partitions {
        let (gutter, row_style) = if moved(p) {
            (
                Span::styled(format!("{} ", Theme::CHANGED_GLYPH), theme.changed_mark()),
                theme.changed(),
            )
        } else {
            (Span::raw("  "), Default::default())
        };
        let committed = p
            .committed
            .map_or_else(|| "-".to_string(), |c| c.to_string());
        let (glyph, lag_style) = if p.lag == 0 {
            ("✓", theme.good())
        } else {
            ("…", theme.waiting())
        };
        out.push(Line::from(vec![
            gutter,
            Span::styled(
                format!(
                    "{} {} {committed:>committed_w$} {:>hw_w$} ",
                    column(&p.partition, part_w),
                    column(p.owner.as_deref().unwrap_or("-"), owner_w),
                    p.high_watermark,
                ),
                row_style,
            ),
            Span::styled(format!("{} {glyph}", p.lag), lag_style.patch(row_style)),
        ]));
    }
    out
}

/// `s` right-aligned in `width` cells (wide characters count twice).
fn right(s: &str, width: usize) -> String {
    let w = Span::raw(s).width();
    format!("{}{s}", " ".repeat(width.saturating_sub(w)))
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId, render};
    use super::row_count;
    use crate::session::snapshot::Snapshot;
    use crate::session::snapshot::groups::{
        GroupPartitionSnapshot, GroupSnapshot, MemberRebalance, MemberSnapshot, MoveSnapshot,
        RebalanceSnapshot,
    };
    use crate::ui::i18n::Lang;
    use crate::ui::theme::Theme;

    fn member(name: &str, deadline: u64, generation: i32, owns: &[&str]) -> MemberSnapshot {
        MemberSnapshot {
            member: name.into(),
            subscriptions: vec!["orders".into()],
            assignment: owns.iter().map(|s| s.to_string()).collect(),
            deadline_ms: deadline,
            client_generation: Some(generation),
            positions: Default::default(),
            last_poll: Vec::new(),
            rebalance: None,
        }
    }

    fn part(name: &str, owner: &str, committed: Option<i64>, hw: i64) -> GroupPartitionSnapshot {
        GroupPartitionSnapshot {
            partition: name.into(),
            owner: Some(owner.into()),
            committed,
            high_watermark: hw,
            log_end_offset: hw,
            lag: hw - committed.unwrap_or(0),
        }
    }

    /// Generation 2 of `workers`: member-2 joined and took orders-1;
    /// member-1's client still holds generation 1.
    fn with_group() -> Snapshot {
        let mut v = view();
        v.clock_ms = 6000;
        v.groups = vec![GroupSnapshot {
            group: "workers".into(),
            state: "stable".into(),
            generation: 2,
            session_timeout_ms: 10_000,
            members: vec![
                member("member-1", 10_000, 1, &["orders-0"]),
                member("member-2", 16_000, 2, &["orders-1"]),
            ],
            partitions: vec![
                part("orders-0", "member-1", Some(2), 2),
                part("orders-1", "member-2", Some(1), 2),
            ],
            last_rebalance: Some(RebalanceSnapshot {
                generation: 2,
                moved: vec![MoveSnapshot {
                    partition: "orders-1".into(),
                    from: Some("member-1".into()),
                    to: Some("member-2".into()),
                }],
            }),
            leader: None,
        }];
        v
    }

    /// Generation 3 of `workers` under Kafka's classic protocol, after the
    /// join: member-1 leads and owes its sync, member-2 synced first and
    /// waits for its assignment.
    fn completing() -> Snapshot {
        let mut v = view();
        v.clock_ms = 13_000;
        let waiting = |name: &str, r: MemberRebalance| MemberSnapshot {
            rebalance: Some(r),
            ..member(name, 23_000, 2, &[])
        };
        v.groups = vec![GroupSnapshot {
            group: "workers".into(),
            state: "completing_rebalance".into(),
            generation: 3,
            session_timeout_ms: 10_000,
            members: vec![
                waiting("member-1", MemberRebalance::OwesSync),
                waiting("member-2", MemberRebalance::AwaitsAssignment),
            ],
            partitions: Vec::new(),
            last_rebalance: None,
            leader: Some("member-1".into()),
        }];
        v
    }

    #[test]
    fn completing_rebalance_marks_the_leader_and_the_member_awaiting_its_assignment() {
        let (v, c) = (completing(), ctx());
        let text = draw(PaneId::Groups, &v, &c, 100, 6);
        insta::assert_snapshot!(text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("workers · completing_rebalance · generation 3"),
            "{text}"
        );
        assert!(lines[2].contains("member-1 leader owes sync"), "{text}");
        assert!(
            lines[2].contains("⚠ holds generation 2 : pending"),
            "{text}"
        );
        assert!(lines[3].contains("member-2 ◷ awaits assignment"), "{text}");
        assert!(!lines[3].contains("leader"), "{text}");
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 6));
        render(PaneId::Groups, &v, &c, buf.area, &mut buf);
        let at = |row: usize, needle: &str| {
            let line = text.lines().nth(row).unwrap();
            let col = line.find(needle).unwrap();
            let x = line[..col].chars().count() as u16;
            buf[(x, row as u16)].style()
        };
        assert_eq!(at(1, "completing_rebalance").fg, c.theme.waiting().fg);
        assert!(
            at(2, "leader")
                .add_modifier
                .contains(c.theme.strong().add_modifier)
        );
        assert_eq!(at(3, "◷").fg, c.theme.waiting().fg);
        let zh = PaneContext {
            lang: Lang::Zh,
            ..ctx()
        };
        let text = draw(PaneId::Groups, &v, &zh, 110, 6);
        assert!(text.contains("◷ 等待分配"), "{text}");
        assert!(text.contains("待分配"), "{text}");
    }

    #[test]
    fn state_members_table_and_moves() {
        let text = draw(PaneId::Groups, &with_group(), &ctx(), 64, 12);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("workers · stable · generation 2 · session 10000 ms"),
            "{text}"
        );
        assert!(
            lines[2].contains("member-1 until 10000 (+4000) ⚠ holds generation 1 : orders-0"),
            "{text}"
        );
        assert!(
            lines[3].contains("member-2 until 16000 (+10000) : orders-1"),
            "{text}"
        );
        assert!(
            lines[4].contains("partition owner    committed HW lag"),
            "{text}"
        );
        assert!(
            lines[5].contains("  orders-0  member-1         2  2 0 ✓"),
            "{text}"
        );
        assert!(
            lines[6].contains("▸ orders-1  member-2         1  2 1 …"),
            "{text}"
        );
        assert!(
            lines[7].contains("last rebalance, generation 2, moved:"),
            "{text}"
        );
        assert!(
            lines[8].contains("▸ orders-1 member-1 → member-2"),
            "{text}"
        );
        assert_eq!(row_count(&with_group()), 8);
    }

    /// The meaning of the colours: lag 0 good, lag above 0 waiting, the
    /// moved marker in the changed-mark style, the stale generation
    /// waiting; without colour the glyphs stay.
    #[test]
    fn colours_mean_lag_moves_and_stale_generations() {
        let (v, c) = (with_group(), ctx());
        let mut buf = Buffer::empty(Rect::new(0, 0, 64, 12));
        render(PaneId::Groups, &v, &c, buf.area, &mut buf);
        let text = super::super::testkit::text(&buf);
        let at = |row: usize, needle: &str| {
            let line = text.lines().nth(row).unwrap();
            let col = line.find(needle).unwrap();
            let x = line[..col].chars().count() as u16;
            buf[(x, row as u16)].style()
        };
        assert_eq!(at(5, "0 ✓").fg, c.theme.good().fg);
        assert_eq!(at(6, "1 …").fg, c.theme.waiting().fg);
        assert_eq!(at(6, "▸").fg, c.theme.changed_mark().fg);
        assert_ne!(c.theme.good().fg, c.theme.waiting().fg);
        assert!(
            at(6, "orders-1")
                .add_modifier
                .contains(c.theme.changed().add_modifier)
        );
        assert!(
            !at(5, "orders-0")
                .add_modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
        assert_eq!(at(2, "⚠").fg, c.theme.waiting().fg);
        assert_eq!(at(1, "stable").fg, c.theme.good().fg);
        // Unfocused on both sides: NO_COLOR marks focus with a thick border.
        let unfocused = |theme| PaneContext {
            theme,
            focused: false,
            ..ctx()
        };
        assert_eq!(
            draw(PaneId::Groups, &v, &unfocused(Theme::plain()), 64, 12),
            draw(PaneId::Groups, &v, &unfocused(Theme::colored()), 64, 12),
            "NO_COLOR draws the same glyphs"
        );
    }

    #[test]
    fn chinese_labels() {
        let zh = PaneContext {
            lang: Lang::Zh,
            ..ctx()
        };
        let text = draw(PaneId::Groups, &with_group(), &zh, 70, 12);
        assert!(text.contains("消费组"), "{text}");
        assert!(text.contains("第 2 代"), "{text}");
        assert!(text.contains("截止 10000（剩 4000）"), "{text}");
        assert!(text.contains("仍持第 1 代"), "{text}");
        assert!(text.contains("拥有者"), "{text}");
        assert!(text.contains("上次重平衡（第 2 代）移动了"), "{text}");
    }

    #[test]
    fn no_group_says_so_and_scrolling_skips_rows() {
        let text = draw(PaneId::Groups, &view(), &ctx(), 40, 4);
        assert!(
            text.lines().nth(1).unwrap().contains("no consumer groups"),
            "{text}"
        );
        let mut observed = view();
        observed.unavailable.push("journal".into());
        let text = draw(PaneId::Groups, &observed, &ctx(), 60, 4);
        assert!(text.contains("not observed"), "{text}");
        let scrolled = draw(
            PaneId::Groups,
            &with_group(),
            &PaneContext { scroll: 3, ..ctx() },
            64,
            6,
        );
        assert!(
            scrolled.lines().nth(1).unwrap().contains("partition"),
            "{scrolled}"
        );
        assert!(
            scrolled.lines().next().unwrap().contains("↑ 3 more"),
            "{scrolled}"
        );
    }
}
