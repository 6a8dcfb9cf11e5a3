//! PostgreSQL clusters of a test's own, for what the running server cannot show alone: a
//! standby, a logical-replication subscriber, an older major version to upgrade or dump. They
//! live in one directory under the system's temp directory, run as the postgres user
//! (PostgreSQL refuses root) on ports of their own, with their socket in that directory; any
//! PostgreSQL installation's programs can run them (`bin`, a BINDIR). Dropping `Clusters`
//! stops every cluster and removes the directory, whatever happened.

use postgres::{Client, NoTls};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Clusters {
    root: PathBuf,
    /// Each cluster made so far: its BINDIR and port.
    clusters: RefCell<BTreeMap<String, (String, u16)>>,
}

impl Clusters {
    /// An empty directory `pg_chunk_<name>` for clusters; one left by a killed run is stopped
    /// and removed first.
    pub fn new(name: &str) -> Clusters {
        let root = std::env::temp_dir().join(format!("pg_chunk_{name}"));
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten() {
                let pid_file = entry.path().join("postmaster.pid");
                if let Some(pid) =
                    std::fs::read_to_string(pid_file).ok().and_then(|s| s.lines().next().map(str::to_string))
                {
                    let _ = Command::new("kill").args(["-KILL", &pid]).status();
                }
            }
        }
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Command::new("chown").args(["postgres:postgres"]).arg(&root).status().unwrap();
        Clusters { root, clusters: RefCell::new(BTreeMap::new()) }
    }

    /// The directory of the sockets (and, when a program writes files where it runs, of them).
    pub fn socket(&self) -> String {
        self.root.display().to_string()
    }

    /// The data directory of cluster `name`.
    pub fn data(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `program` of the installation `bin`, run as postgres in the clusters' directory; its
    /// standard output. Panics with both outputs when it fails.
    pub fn run(&self, bin: &str, program: &str, args: &[&str]) -> String {
        let output = Command::new("runuser")
            .args(["-u", "postgres", "--", &format!("{bin}/{program}")])
            .args(args)
            .current_dir(&self.root)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Makes cluster `name` with `bin`'s initdb, to listen on `port` (socket only) with pg_chunk
    /// preloaded and `conf` appended to its postgresql.conf; not started.
    pub fn init(&self, name: &str, bin: &str, port: u16, conf: &str) -> PathBuf {
        let data = self.data(name);
        self.run(bin, "initdb", &["-D", data.to_str().unwrap(), "--auth=trust", "-U", "postgres", "--no-sync"]);
        self.configure(name, bin, port, conf);
        data
    }

    /// Records cluster `name` (a data directory made otherwise, by pg_basebackup say) and
    /// appends its port, socket and `conf` to its postgresql.conf.
    pub fn configure(&self, name: &str, bin: &str, port: u16, conf: &str) {
        append(
            &self.data(name).join("postgresql.conf"),
            &format!(
                "\nport = {port}\nlisten_addresses = ''\nunix_socket_directories = '{}'\nfsync = off\n\
                 shared_preload_libraries = 'pg_chunk'\n{conf}\n",
                self.socket()
            ),
        );
        self.clusters.borrow_mut().insert(name.to_string(), (bin.to_string(), port));
    }

    fn bin_and_port(&self, name: &str) -> (String, u16) {
        self.clusters.borrow().get(name).cloned().unwrap_or_else(|| panic!("no cluster {name}"))
    }

    pub fn port(&self, name: &str) -> u16 {
        self.bin_and_port(name).1
    }

    pub fn start(&self, name: &str) {
        let (bin, _) = self.bin_and_port(name);
        let log = self.root.join(format!("{name}.log"));
        self.run(
            &bin,
            "pg_ctl",
            &["-D", self.data(name).to_str().unwrap(), "-l", log.to_str().unwrap(), "-w", "-t", "60", "start"],
        );
    }

    /// A fast shutdown (a checkpoint, as pg_upgrade wants), if it runs.
    pub fn stop(&self, name: &str) {
        let (bin, _) = self.bin_and_port(name);
        if self.data(name).join("postmaster.pid").exists() {
            self.run(&bin, "pg_ctl", &["-D", self.data(name).to_str().unwrap(), "-m", "fast", "-w", "stop"]);
        }
    }

    /// The server log of cluster `name`.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(format!("{name}.log"))).unwrap_or_default()
    }

    /// A connection to database `dbname` of cluster `name`, as postgres.
    pub fn connect(&self, name: &str, dbname: &str) -> Client {
        let params = format!("host={} port={} user=postgres dbname={dbname}", self.socket(), self.port(name));
        Client::connect(&params, NoTls).unwrap_or_else(|e| panic!("cannot connect with {params}: {e}"))
    }

    /// The connection string `connect` uses, for pg_dump and friends.
    pub fn connection_string(&self, name: &str, dbname: &str) -> String {
        format!("host={} port={} user=postgres dbname={dbname}", self.socket(), self.port(name))
    }
}

impl Drop for Clusters {
    fn drop(&mut self) {
        for (name, (bin, _)) in self.clusters.borrow().iter() {
            if self.data(name).join("postmaster.pid").exists() {
                let _ = Command::new("runuser")
                    .args(["-u", "postgres", "--", &format!("{bin}/pg_ctl"), "-D"])
                    .arg(self.data(name))
                    .args(["-m", "immediate", "-w", "stop"])
                    .output();
            }
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn append(file: &Path, text: &str) {
    let mut contents = std::fs::read_to_string(file).unwrap();
    contents.push_str(text);
    std::fs::write(file, contents).unwrap();
}

/// Polls `condition` every 100 ms until it holds; panics after `limit`, naming `what`.
pub fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
