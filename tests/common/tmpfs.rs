//! A real 1 MiB tmpfs for the full-disk tests: the test binary re-runs
//! one test inside a private mount namespace (`unshare -m`, root or user
//! namespaces), with the mount's path in an environment variable; where
//! that cannot be done the test says it was skipped.

/// Re-runs the test `name` of this binary with a 1 MiB tmpfs mounted at
/// the directory named by `env`, and prints the inner run's lines that
/// contain `marker` (it must print one).
pub fn in_a_tmpfs(name: &str, env: &str, marker: &str) {
    let mount = tempfile::tempdir().unwrap();
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{}' && echo MOUNTED && exec \"$0\" --exact {name} --nocapture --test-threads 1",
        mount.path().display()
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .arg(std::env::current_exe().unwrap())
        .env(env, mount.path())
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains(marker), "{stdout}");
            for line in stdout.lines().filter(|l| l.contains(marker)) {
                println!("{line}");
            }
        }
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("MOUNTED") => panic!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Ok(out) => println!(
            "skipped: cannot mount a tmpfs here ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("skipped: cannot run unshare ({e})"),
    }
}
