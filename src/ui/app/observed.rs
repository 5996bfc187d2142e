//! The dashboard over a real Kafka cluster (docs/observe.md "Live"): the
//! same panes, drawn from the observation's snapshots, live or replayed
//! from an observation recording (the session's observed mode). What is
//! here is what the status line says of the refreshes. `r` (the live
//! dashboard's replicate key) asks for a refresh now; engine keys are
//! off, as for a saved state.

use super::{App, Status, StatusKind};
use crate::session::Session;
use crate::session::observation::{ObservationTimeline, ObservedSession, Refresher};
use crate::session::observed::Refreshes;
use crate::ui::i18n::Lang;
use crate::ui::layout::Layout;
use crate::ui::theme::Theme;

impl App {
    /// The live dashboard over an observed cluster.
    pub fn observing(
        session: ObservedSession,
        refresher: Box<dyn Refresher>,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Self {
        let title = session.header().title.clone();
        let session = Session::observing(session, refresher);
        let mut app = Self::new(session, title, layout, lang, theme);
        app.status = Some(Status {
            kind: StatusKind::Pending,
            text: app.lang.pick(
                "refresh 1: asking the cluster…".into(),
                "刷新 1：正在询问集群……".into(),
            ),
        });
        app
    }

    /// A replay of an observation recording, at step 0.
    pub fn observation_replay(
        timeline: ObservationTimeline,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Self {
        let title = timeline.observation().header.title.clone();
        Self::new(
            Session::observation_replay(timeline),
            title,
            layout,
            lang,
            theme,
        )
    }

    /// Live: refreshes were taken as steps; the status line says how the
    /// last one went.
    pub(super) fn refreshed(&mut self, r: Refreshes) {
        let n = r.step;
        let status = match r.failed {
            Some(error) => Status::error(error),
            None => {
                let changes = r.changes;
                Status {
                    kind: StatusKind::Ok,
                    text: self.lang.pick(
                        match changes {
                            0 => format!("refresh {n}: ok, nothing changed"),
                            1 => format!("refresh {n}: ok, 1 change"),
                            c => format!("refresh {n}: ok, {c} changes"),
                        },
                        format!("刷新 {n}：成功，{changes} 处变化"),
                    ),
                }
            }
        };
        self.status = Some(match r.not_recorded {
            Some(e) => Status::error(e),
            None => status,
        });
        self.follow();
    }

    /// A replay moved to another refresh: the partitions pane follows what
    /// it changed, and the status line says a failed refresh's error, as
    /// the live screen said it (nothing for one that answered).
    pub(super) fn moved_in_observation(&mut self) {
        self.touched();
        let view = self.view();
        self.status = crate::session::observation::is_stale(view)
            .then(|| view.errors.last().map(|e| Status::error(e.message.clone())))
            .flatten();
        self.follow();
    }

    /// `r`: observing live, asks for a refresh now; elsewhere the
    /// followers fetch (an engine key, off outside a live session).
    pub(super) fn replicate_all(&mut self) {
        let Some((n, asked)) = self.session.request_refresh() else {
            return self.apply(crate::session::Action::Replicate {
                broker: None,
                topic: None,
                partition: None,
            });
        };
        self.status = Some(if asked {
            Status {
                kind: StatusKind::Pending,
                text: self.lang.pick(
                    format!("refresh {n}: asking the cluster…"),
                    format!("刷新 {n}：正在询问集群……"),
                ),
            }
        } else {
            Status::error(self.lang.pick(
                "no more refreshes: --refreshes is reached".into(),
                "不再刷新：已达到 --refreshes 的次数".into(),
            ))
        });
    }
}
