//! The model's transaction coordinator steps (E10-E14): resolving a
//! handle, completing an instance at once (recovery, timeout, fencing),
//! publishing offsets, and the kafka-rule timeout.

use super::*;

impl Model {
    /// The latest instance of `id`, for a handle: under the kafka rules a
    /// handle of an older producer epoch is fenced.
    pub(super) fn resolve(&self, id: &str, handle: Option<i32>) -> Result<usize, Failure> {
        let latest = self.coord.latest(id).ok_or(Failure::UnknownTransaction)?;
        if self.setup.kafka {
            let current = self.coord.instance(latest).producer.map_or(-1, |p| p.1);
            if handle.is_some_and(|e| e < current) {
                return Err(Failure::TransactionFenced);
            }
        }
        Ok(latest)
    }

    pub(super) fn require(
        &self,
        id: &str,
        handle: Option<i32>,
        allowed: &[TxState],
    ) -> Result<usize, Failure> {
        let index = self.resolve(id, handle)?;
        if allowed.contains(&self.coord.instance(index).state) {
            Ok(index)
        } else {
            Err(Failure::InvalidTransactionState)
        }
    }

    /// The handle the driver's client of `id` holds: the one its begin
    /// returned, else one on the latest instance.
    pub(super) fn handle(&self, id: &str) -> Result<Option<i32>, Failure> {
        match self.refs.get(id) {
            Some(h) => Ok(*h),
            None => {
                let i = self.coord.latest(id).ok_or(Failure::UnknownTransaction)?;
                Ok(self.coord.instance(i).producer.map(|p| p.1))
            }
        }
    }

    pub(super) fn marker_payload(&self, index: usize, commit: bool) -> (Payload, (i64, i32)) {
        let d = self.coord.instance(index);
        (
            Payload::Marker {
                txn: d.id.clone(),
                commit,
            },
            d.producer.unwrap_or((-1, -1)),
        )
    }

    /// Drives an instance to COMPLETE_* at once (recovery, timeout,
    /// fencing): PREPARE_* if not yet, the missing markers with the
    /// leader's append (not waited for), offsets published or discarded,
    /// COMPLETE_*. Returns the markers written.
    pub(super) fn complete_now(
        &mut self,
        index: usize,
        commit: bool,
        write_markers: bool,
    ) -> Vec<(String, String, &'static str, i64)> {
        let mut data = self.coord.instance(index).clone();
        if data.state == TxState::Ongoing {
            data.state = TxState::prepare(commit);
            self.coord.write(data.clone());
        }
        let mut written = Vec::new();
        if write_markers {
            for (tp, _) in data.first.clone() {
                let stopped = self.parts.get(&tp).is_none_or(Part::leader_stopped);
                if stopped {
                    continue;
                }
                let log = self.parts[&tp].leader_log();
                if self.coord.marker(index, &tp, commit, log).is_some() {
                    continue;
                }
                let (payload, pid) = self.marker_payload(index, commit);
                let (offset, _) = self
                    .append(&tp, payload, false, pid, Some(index))
                    .expect("a running leader takes an acks=1 append");
                written.push((
                    data.id.clone(),
                    tp_name(&tp),
                    if commit { "commit" } else { "abort" },
                    offset,
                ));
            }
        }
        if commit {
            self.publish(&data.staged);
        } else {
            data.staged.clear();
        }
        data.state = TxState::completed(commit);
        self.coord.write(data);
        self.coord.in_flight.remove(&index);
        self.coord.pending_sends.retain(|(i, _), _| *i != index);
        written
    }

    pub(super) fn publish(&mut self, staged: &BTreeMap<String, BTreeMap<Tp, i64>>) {
        for (group, offsets) in staged {
            let entry = self.offsets.entry(group.clone()).or_default();
            entry.extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        }
    }

    /// Kafka rules: ONGOING instances older than the timeout abort.
    pub(super) fn expire(&mut self) {
        if !self.setup.kafka {
            return;
        }
        let expired: Vec<usize> = self
            .coord
            .current()
            .into_values()
            .filter(|&i| {
                let d = self.coord.instance(i);
                d.state == TxState::Ongoing
                    && !self.coord.in_flight.contains(&i)
                    && d.started
                        .is_some_and(|s| self.clock.saturating_sub(s) >= self.setup.timeout_ms)
            })
            .collect();
        for index in expired {
            self.coverage.expired += 1;
            self.complete_now(index, false, true);
        }
    }
}
