//! Observation recordings in the headless commands and the replay
//! (docs/recording-format.md "Observation recordings"): a file whose header
//! has `mk_observation` is read here, the rest as before by the engine
//! recording's reader (unchanged). `state` and `render` show a refresh's step
//! as the replay does, `export` writes its cast; `check` reads every line; a
//! replay steps through the refreshes. What an observation cannot do (apply in
//! a data directory, branch) is refused in one line.

use std::path::Path;

use crate::session::Snapshot;
use crate::session::error::{Result, SessionError};
use crate::session::observation::{Observation, ObservationTimeline, is_observation};
use crate::ui::app::App;
use crate::ui::headless::{self, Format, Look};

/// The observation recording in `file`, or None when `file` is not one.
pub(super) fn load(file: &Path) -> Option<Result<Observation>> {
    is_observation(file).then(|| Observation::load(file).map_err(SessionError::from))
}

/// `--step N` checked against the observation's last step.
fn target(file: &Path, observation: &Observation, step: Option<usize>) -> Result<usize> {
    let last = observation.len();
    match step {
        Some(s) if s > last => Err(SessionError::path(
            file,
            format!("--step {s} is past the last step, {last}"),
        )),
        Some(s) => Ok(s),
        None => Ok(last),
    }
}

/// `mk-tui state OBS.jsonl [--step N]`.
pub(super) fn state(
    file: &Path,
    observation: Observation,
    step: Option<usize>,
    data_dir: Option<&Path>,
) -> Result<Snapshot> {
    if let Some(dir) = data_dir {
        return Err(SessionError::path(
            file,
            format!(
                "an observation recording holds snapshots, not actions: nothing to apply in --data-dir {}",
                dir.display()
            ),
        ));
    }
    let n = target(file, &observation, step)?;
    let mut timeline = ObservationTimeline::new(observation);
    timeline.goto(n);
    Ok(timeline.view().clone())
}

/// `mk-tui render OBS.jsonl [--step N | --all]`: the frames and their steps.
pub(super) fn render(
    file: &Path,
    observation: Observation,
    (step, all): (Option<usize>, bool),
    size: Option<&str>,
    format: Format,
    look: Look,
) -> Result<Vec<(usize, String)>> {
    let (cols, rows) = size_of(size, &observation)?;
    let steps: Vec<usize> = if all {
        (0..=observation.len()).collect()
    } else {
        vec![target(file, &observation, step)?]
    };
    let timeline = ObservationTimeline::new(observation);
    let frames = headless::render_observation_in(timeline, &steps, cols, rows, format, look)
        .map_err(|e| e.in_(file.display()))?;
    Ok(steps.into_iter().zip(frames).collect())
}

/// `mk-tui export OBS.jsonl --cast OUT [--from N] [--to M]`: the cast's
/// bytes, each refresh at its `at_ms`.
pub(super) fn export(
    file: &Path,
    observation: Observation,
    (from, to): (Option<usize>, Option<usize>),
    size: Option<&str>,
    look: Look,
) -> Result<Vec<u8>> {
    let (cols, rows) = size_of(size, &observation)?;
    let last = observation.len();
    let (from, to) = (from.unwrap_or(0), to.unwrap_or(last));
    if from > to || to > last {
        return Err(SessionError::path(
            file,
            format!("--from {from} --to {to}: expected 0 <= from <= to <= {last}, the last step"),
        ));
    }
    let mut out = Vec::new();
    let timeline = ObservationTimeline::new(observation);
    headless::export_observation_cast_in(timeline, cols, rows, look, (from, to), &mut out)
        .map_err(|e| e.in_(file.display()))?;
    Ok(out)
}

/// `--size COLSxROWS`, or the recording's terminal, or 120x36.
fn size_of(size: Option<&str>, observation: &Observation) -> Result<(u16, u16)> {
    match size {
        Some(s) => super::parse_size(s),
        None => Ok(observation
            .header
            .terminal
            .map_or((120, 36), |t| (t.cols, t.rows))),
    }
}

/// `mk-tui replay OBS.jsonl`: the dashboard at step 0.
pub(super) fn replay(observation: Observation, look: Look) -> App {
    App::observation_replay(
        ObservationTimeline::new(observation),
        look.layout,
        look.lang,
        look.theme,
    )
}

/// Why `what` (an option or a command) does not apply to an observation,
/// in one line that says `why`.
pub(super) fn refuse(file: &Path, what: &str, why: &str) -> SessionError {
    SessionError::path(
        file,
        format!("an observation recording (mk_observation) cannot {what}: {why}"),
    )
}
