//! Apache Kafka 4.4 as the reference: a three-node KRaft cluster on free
//! loopback ports, started by tests/kafka-ref/start.sh (which fetches the
//! broker from Maven Central on first use) for the tests that compare with
//! Kafka, and Kafka's own Java client run as single-file programs from
//! tests/kafka-ref/java/.
//!
//! [`KafkaRef::start`] gives each caller a cluster of its own (a test
//! that kills a node disturbs no other test). Dropping it stops the nodes
//! by PID; if the test process dies first, start.sh's watchdog ends them
//! with it. A test that cannot start Kafka (no Java, no Maven, no
//! network to Maven Central) fails under `CI=true` (CI installs and
//! fetches everything) and is skipped elsewhere with the reason printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a node may take to answer after a restart.
const NODE_START: Duration = Duration::from_secs(90);
/// How long one Java client program may run.
const JAVA_TIMEOUT: Duration = Duration::from_secs(120);

pub struct KafkaRef {
    dir: tempfile::TempDir,
    /// `host:port,host:port,host:port`, the three brokers.
    pub bootstrap: String,
    /// Each node's broker port, node ids 1, 2, 3 in order.
    pub ports: Vec<u16>,
    java: PathBuf,
    classpath: String,
}

impl Drop for KafkaRef {
    fn drop(&mut self) {
        let _ = Command::new(script("stop.sh"))
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kafka-ref")
        .join(name)
}

/// Under CI Kafka is always available, so not getting it is a failure.
pub fn skip_or_fail(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "CI fetches and starts Apache Kafka (.ci/run, tests/kafka-ref/start.sh), yet {reason}"
        );
    }
    println!("skipped: {reason}");
}

impl KafkaRef {
    /// A fresh three-node cluster, or `None` (after printing why) where
    /// Kafka cannot be had outside CI.
    pub fn start() -> Option<Self> {
        let dir = tempfile::Builder::new()
            .prefix("kafka-ref")
            .tempdir()
            .unwrap();
        let out = Command::new(script("start.sh"))
            .arg(dir.path())
            .args(["--owner-pid", &std::process::id().to_string()])
            .args(["--lifetime", "1800"])
            .stdin(Stdio::null())
            .output();
        let out = match out {
            Ok(out) if out.status.success() => out,
            Ok(out) => {
                skip_or_fail(&format!(
                    "tests/kafka-ref/start.sh failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
                return None;
            }
            Err(e) => {
                skip_or_fail(&format!("tests/kafka-ref/start.sh did not run: {e}"));
                return None;
            }
        };
        let env: BTreeMap<String, String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let ports = (1..=3)
            .map(|n| env[&format!("KAFKA_NODE{n}_PORT")].parse().unwrap())
            .collect();
        Some(Self {
            bootstrap: env["KAFKA_BOOTSTRAP"].clone(),
            ports,
            java: PathBuf::from(&env["KAFKA_JAVA"]),
            classpath: env["KAFKA_CLASSPATH"].clone(),
            dir,
        })
    }

    /// The directory holding the nodes' data and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Node `n`'s (1-3) current process id.
    pub fn pid(&self, n: u32) -> u32 {
        std::fs::read_to_string(self.dir.path().join(format!("node{n}/pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// `host:port` of node `n` (1-3).
    pub fn addr(&self, n: u32) -> String {
        format!("127.0.0.1:{}", self.ports[n as usize - 1])
    }

    /// Kills node `n` with SIGKILL (a crash, as a test of failover wants)
    /// and waits until it is gone. Until the controller fences it
    /// (`broker.session.timeout.ms`, 6 s) Metadata still lists it and
    /// names it leader: a test that needs the failover done calls
    /// [`KafkaRef::kill_and_fence`].
    pub fn kill(&self, n: u32) {
        let pid = self.pid(n);
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
            // The node is a child of start.sh's shell, which has exited,
            // so init reaps it; /proc/PID lingers only while that happens.
            if std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills node `n`, then waits until the controller has fenced it: the
    /// other brokers list only each other, and its partitions' leaders
    /// have moved.
    pub fn kill_and_fence(&self, n: u32) {
        self.kill(n);
        let others: Vec<u32> = (1..=3).filter(|&m| m != n).collect();
        self.wait_brokers(&others);
    }

    /// Waits until the cluster lists exactly `brokers` (registered and not
    /// fenced), asking through the other nodes; panics after 90 s.
    pub fn wait_brokers(&self, brokers: &[u32]) {
        let boot: Vec<String> = brokers.iter().map(|&m| self.addr(m)).collect();
        let list: Vec<String> = brokers.iter().map(u32::to_string).collect();
        self.java("WaitBrokers.java", &[&boot.join(","), &list.join(",")]);
    }

    /// Starts node `n` again on its data directory and waits until the
    /// cluster lists all three brokers again.
    pub fn restart(&self, n: u32) {
        let status = Command::new(script("node.sh"))
            .arg(self.dir.path())
            .arg(n.to_string())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "node.sh {n} failed");
        let deadline = Instant::now() + NODE_START;
        while std::net::TcpStream::connect(self.addr(n)).is_err() {
            assert!(
                Instant::now() < deadline,
                "Kafka node {n} did not listen again within {NODE_START:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        self.wait_brokers(&[1, 2, 3]);
    }

    /// The last `lines` lines of node `n`'s server log, for a failure.
    pub fn log_tail(&self, n: u32, lines: usize) -> String {
        let log = std::fs::read_to_string(self.dir.path().join(format!("node{n}/logs/server.log")))
            .unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Runs tests/kafka-ref/java/`program` (a single-file Java program,
    /// launched from source with Kafka's Java client 4.4 on the class
    /// path) with `args`, and returns its standard output. Panics with its
    /// error output if it fails or outlives [`JAVA_TIMEOUT`].
    pub fn java(&self, program: &str, args: &[&str]) -> String {
        java_program(&self.java, &self.classpath, program, args)
    }

    /// How to run the Java client without a cluster of our own (against
    /// `mk-tui serve`, say): the Java and class path start.sh would use.
    pub fn java_client() -> Option<JavaClient> {
        let fetch = Command::new(script("fetch.sh"))
            .stdout(Stdio::null())
            .output();
        match fetch {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                skip_or_fail(&format!(
                    "tests/kafka-ref/fetch.sh failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
                return None;
            }
            Err(e) => {
                skip_or_fail(&format!("tests/kafka-ref/fetch.sh did not run: {e}"));
                return None;
            }
        }
        let jdk17 = PathBuf::from("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
        let java = std::env::var_os("JAVA")
            .map(PathBuf::from)
            .unwrap_or(if jdk17.exists() { jdk17 } else { "java".into() });
        Some(JavaClient {
            java,
            classpath: format!("{}/target/lib/*", script("").display()),
        })
    }
}

/// Kafka's Java client, runnable against any bootstrap address.
pub struct JavaClient {
    java: PathBuf,
    classpath: String,
}

impl JavaClient {
    pub fn run(&self, program: &str, args: &[&str]) -> String {
        java_program(&self.java, &self.classpath, program, args)
    }

    /// Runs the main class `class` of Kafka's 4.4 jars (its own tools,
    /// `org.apache.kafka.tools.TopicCommand` say) with `args`, bounded as
    /// a program is; its standard output.
    pub fn run_main(&self, class: &str, args: &[&str]) -> String {
        run_java(&self.java, &self.classpath, class.as_ref(), class, args)
    }
}

impl KafkaRef {
    /// [`JavaClient::run_main`] with this cluster's Java and class path.
    pub fn run_main(&self, class: &str, args: &[&str]) -> String {
        run_java(&self.java, &self.classpath, class.as_ref(), class, args)
    }
}

fn java_program(java: &Path, classpath: &str, program: &str, args: &[&str]) -> String {
    let source = script("java").join(program);
    run_java(java, classpath, source.as_os_str(), program, args)
}

/// Runs `java -cp CLASSPATH LAUNCH ARGS` (a source file or a main class),
/// called `program` in a failure's message.
fn run_java(
    java: &Path,
    classpath: &str,
    launch: &std::ffi::OsStr,
    program: &str,
    args: &[&str],
) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new(java)
        .args(["-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath])
        .arg(launch)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + JAVA_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let out = std::fs::read_to_string(&out_path).unwrap_or_default();
            let err = std::fs::read_to_string(&err_path).unwrap_or_default();
            panic!("{program} {args:?} ran past {JAVA_TIMEOUT:?}:\n{out}\n{err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&out_path).unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(
        status.success(),
        "{program} {args:?} failed ({status}):\n{out}\n{err}"
    );
    out
}
