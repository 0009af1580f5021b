//! A throw-away PostgreSQL 15 cluster for the bench (Debian's `postgresql`):
//! `initdb -A trust` as the unprivileged user `nobody` (initdb refuses
//! root), listening only on a Unix socket in its own directory, with
//! `fsync` and `synchronous_commit` left on (durable, like Redis's
//! `appendfsync always` beside it). Stopped (`pg_ctl stop -m fast`) and
//! removed when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// `REMIND_BENCH_PG_STATS=1`: the cluster loads `pg_stat_statements`, and
/// each PostgreSQL part prints the statements that took the most time
/// during its drain (reset when everything is queued). Off by default.
#[must_use]
pub fn stats() -> bool {
    std::env::var_os("REMIND_BENCH_PG_STATS").is_some_and(|v| v == "1")
}

/// A running cluster.
pub struct Cluster {
    dir: PathBuf,
}

fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("{cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn as_nobody(program: &str) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "nobody", "--", &format!("{BIN}/{program}")]);
    c
}

impl Cluster {
    /// Makes and starts a cluster in `dir` (created; must not exist).
    ///
    /// # Errors
    /// PostgreSQL is not installed, or does not start.
    pub fn start(dir: &Path) -> Result<Self> {
        anyhow::ensure!(
            Path::new(BIN).join("initdb").exists(),
            "PostgreSQL 15 is not installed: apt-get install postgresql (scripts/deps.sh)"
        );
        std::fs::create_dir_all(dir)?;
        run(Command::new("chown").arg("nobody").arg(dir))?;
        // Every directory above must be searchable by `nobody`.
        let mut up = dir.parent();
        while let Some(p) = up {
            if p.as_os_str().is_empty() || p == Path::new("/") {
                break;
            }
            let _ = Command::new("chmod").arg("o+x").arg(p).output();
            up = p.parent();
        }
        let data = dir.join("data");
        run(as_nobody("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "kairos"]))?;
        let this = Self {
            dir: dir.to_owned(),
        };
        run(as_nobody("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("log"))
            .args(["-w", "-t", "30", "-o"])
            .arg(format!(
                "-k {} -c listen_addresses='' -c max_connections=200{}",
                dir.display(),
                if stats() {
                    " -c shared_preload_libraries=pg_stat_statements"
                } else {
                    ""
                }
            ))
            .arg("start"))?;
        Ok(this)
    }

    /// Its data directory.
    #[must_use]
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The URL of database `name`.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://kairos@localhost/{name}?host={}",
            self.dir.display()
        )
    }

    /// Creates database `name`: its URL.
    ///
    /// # Errors
    /// `createdb` fails.
    pub fn create(&self, name: &str) -> Result<String> {
        run(as_nobody("createdb")
            .args(["-h"])
            .arg(&self.dir)
            .args(["-U", "kairos", name]))?;
        Ok(self.url(name))
    }

    /// Prints database `name`'s top statements (`pg_stat_statements`) and
    /// when autovacuum last ran on the reminder tables.
    ///
    /// # Errors
    /// `psql` failed.
    pub fn print_stats(&self, name: &str) -> Result<()> {
        println!(
            "  pg_stat_statements during the drain (total ms | calls | mean ms | rows | query):"
        );
        let top = self.query(
            name,
            "SELECT round(total_exec_time::numeric, 1), calls, round(mean_exec_time::numeric, 3), rows,
                    left(regexp_replace(query, '\\s+', ' ', 'g'), 110)
             FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12",
        )?;
        for line in top.lines() {
            println!("    {line}");
        }
        // Autovacuum during the drain is one candidate for runs that are
        // slower or faster throughout: say when it last ran.
        println!(
            "  vacuum (table | dead rows | autovacuums | autoanalyzes | last autovacuum, last autoanalyze, ms before the end):"
        );
        let vac = self.query(
            name,
            "SELECT relname, n_dead_tup, autovacuum_count, autoanalyze_count,
                    coalesce(round(extract(epoch FROM now() - last_autovacuum) * 1000)::text, '-'),
                    coalesce(round(extract(epoch FROM now() - last_autoanalyze) * 1000)::text, '-')
             FROM pg_stat_user_tables WHERE relname LIKE 'remind%' ORDER BY relname",
        )?;
        for line in vac.lines() {
            println!("    {line}");
        }
        Ok(())
    }

    /// One value from `psql -tA -c SQL` on database `name`.
    ///
    /// # Errors
    /// psql fails.
    pub fn query(&self, name: &str, sql: &str) -> Result<String> {
        Ok(run(Command::new(format!("{BIN}/psql"))
            .arg("-h")
            .arg(&self.dir)
            .args(["-U", "kairos", "-d", name, "-tA", "-F", "|", "-c", sql]))?
        .trim()
        .to_owned())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = as_nobody("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
