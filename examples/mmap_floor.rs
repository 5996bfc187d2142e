//! Is `write(2)` P3's floor? (issue 29, item 2; docs/performance.md, "P3's
//! bound"). A log whose segments were memory-mapped would copy each frame
//! into the page cache without a system call, which could in principle
//! beat the buffered write P3 is measured against. This measures exactly
//! that copy: P3's 200 frames a round (100 x 100 B records each), into
//! fresh 1 MiB segment files, rolled as the book's log rolls,
//! - by `write(2)` of each frame (the baseline's round), against
//! - a `memcpy` of each frame into the segment mapped shared
//!   (`ftruncate` to 1 MiB, `mmap`; at the roll `munmap` and `ftruncate`
//!   back to the bytes written).
//!
//! Alternating rounds; the thread's CPU time, median and 10th percentile.
//!
//! Run: `cargo run --release --example mmap_floor [ROUNDS]` (default 101).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use minikafka::engine::core::codec;
use minikafka::perf;

const SEGMENT: usize = 1 << 20;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(101, |a| a.parse().expect("ROUNDS"));
    let frames: Vec<Vec<u8>> = (0..200)
        .map(|i| codec::encode(&perf::record_batch(100, 100, i)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (mut written, mut mapped) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let w = dir.path().join(format!("w{r}"));
        let m = dir.path().join(format!("m{r}"));
        fs::create_dir(&w).unwrap();
        fs::create_dir(&m).unwrap();
        written.push(timed(|| write_round(&w, &frames)));
        mapped.push(timed(|| mmap_round(&m, &frames)));
        fs::remove_dir_all(&w).unwrap();
        fs::remove_dir_all(&m).unwrap();
    }
    let (w50, w10) = percentiles(&mut written);
    let (m50, m10) = percentiles(&mut mapped);
    println!(
        "{rounds} rounds of 200 frames ({} bytes): write(2) p50 {w50:?} p10 {w10:?}; mmap p50 {m50:?} p10 {m10:?}; mmap / write {:.2} (p50), {:.2} (p10)",
        frames.iter().map(Vec::len).sum::<usize>(),
        m50.as_secs_f64() / w50.as_secs_f64(),
        m10.as_secs_f64() / w10.as_secs_f64()
    );
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = perf::thread_cpu();
    f();
    perf::thread_cpu() - start
}

fn percentiles(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() / 10])
}

fn segment(dir: &Path, n: usize) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.join(format!("{n:020}.log")))
        .unwrap()
}

/// The baseline's round: one `write(2)` a frame, a new file every 1 MiB.
fn write_round(dir: &Path, frames: &[Vec<u8>]) {
    let (mut n, mut used) = (0, 0);
    let mut file = segment(dir, n);
    for f in frames {
        if used + f.len() > SEGMENT {
            n += 1;
            used = 0;
            file = segment(dir, n);
        }
        file.write_all(f).unwrap();
        used += f.len();
    }
}

/// The same frames copied into each segment mapped shared.
fn mmap_round(dir: &Path, frames: &[Vec<u8>]) {
    let (mut n, mut used) = (0, 0);
    let mut file = segment(dir, n);
    let mut map = Mapped::new(&file);
    for f in frames {
        if used + f.len() > SEGMENT {
            map.close(&file, used);
            n += 1;
            used = 0;
            file = segment(dir, n);
            map = Mapped::new(&file);
        }
        map.bytes()[used..used + f.len()].copy_from_slice(f);
        used += f.len();
    }
    map.close(&file, used);
}

/// A segment file of [`SEGMENT`] bytes mapped shared.
struct Mapped(*mut u8);

impl Mapped {
    fn new(file: &File) -> Self {
        file.set_len(SEGMENT as u64).unwrap();
        // SAFETY: a fresh shared mapping of a file this process holds open
        // at SEGMENT bytes; unmapped by `close` before the file is dropped.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                SEGMENT,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED, "mmap");
        Mapped(at.cast())
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is SEGMENT bytes long and live until `close`.
        unsafe { std::slice::from_raw_parts_mut(self.0, SEGMENT) }
    }

    /// Unmaps and cuts the file back to the `used` bytes written.
    fn close(self, file: &File, used: usize) {
        // SAFETY: the mapping made by `new`, unmapped once.
        assert_eq!(unsafe { libc::munmap(self.0.cast(), SEGMENT) }, 0, "munmap");
        file.set_len(used as u64).unwrap();
    }
}
