//! A PostgreSQL that takes only TLS (`hostssl` in its `pg_hba.conf`, as a
//! managed one does), with a certificate a CA of the test's own signed
//! (`src/store/pg/tls.rs`): `sslmode=require` with `sslrootcert` migrates
//! and serves (pairing, a push); without the CA the certificate is refused
//! by name; without `sslmode` the server refuses the clear connection.

use std::path::Path;
use std::process::Command;

use crate::support::{BIN, Maker, Server};

const PG: &str = "/usr/lib/postgresql/15/bin";

/// A cluster on 127.0.0.1 that takes TLS only; stopped on drop.
struct TlsCluster {
    dir: tempfile::TempDir,
    port: u16,
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "nobody", "--", &format!("{PG}/pg_ctl")])
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

fn nobody(program: &str) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "nobody", "--", &format!("{PG}/{program}")]);
    c
}

fn ok(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(cert: &str, key: &str) -> TlsCluster {
    assert!(
        Path::new(PG).join("initdb").exists(),
        "PostgreSQL 15 missing"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for (name, text) in [("server.crt", cert), ("server.key", key)] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    assert!(ok(Command::new("chown")
        .arg("-R")
        .arg("nobody")
        .arg(dir.path())));
    assert!(ok(Command::new("chmod")
        .arg("0600")
        .arg(dir.path().join("server.key"))));
    assert!(ok(nobody("initdb").arg("-D").arg(&data).args([
        "-A",
        "trust",
        "-U",
        "kairos",
        "--no-sync"
    ])));
    // TLS only over TCP: no `host` line, only `hostssl`.
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    // The port is found free, then taken by PostgreSQL: try again if
    // another process took it between (bounded).
    for _ in 0..5 {
        let port = free_port();
        let started = ok(nobody("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.path().join("log"))
            .args(["-w", "-t", "30", "-o"])
            .arg(format!(
                "-k {d} -c listen_addresses=127.0.0.1 -c port={port} -c ssl=on \
                 -c ssl_cert_file={d}/server.crt -c ssl_key_file={d}/server.key -c fsync=off",
                d = dir.path().display()
            ))
            .arg("start"));
        if started {
            return TlsCluster { dir, port };
        }
    }
    panic!(
        "the TLS cluster did not start: {}",
        std::fs::read_to_string(dir.path().join("log")).unwrap_or_default()
    );
}

/// `kairos-server --database URL ARGS`: (success, stdout + stderr).
fn admin(url: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(BIN)
        .args(["--database", url])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_that_takes_only_tls_is_reached_with_its_ca() {
    let (ca, cert, key) = crate::certs::ca_and_leaf("Kairos test database CA");
    let cluster = start(&cert, &key);
    let ca_file = cluster.dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca).unwrap();
    let base = format!("postgres://kairos@127.0.0.1:{}/postgres", cluster.port);
    let tls = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        ca_file.display()
    );

    let (done, said) = admin(&format!("{base}?sslmode=require"), &["migrate"]);
    assert!(!done, "no CA given: refused");
    assert!(
        said.contains("the database's certificate is refused: it is signed by an authority"),
        "{said}"
    );
    let (done, said) = admin(&base, &["migrate"]);
    assert!(!done, "in the clear: refused by the database");
    assert!(said.contains("no encryption"), "{said}");
    let (done, said) = admin(&tls, &["migrate"]);
    assert!(done, "{said}");

    // Serving over it: pairing, a session, a push answered.
    let server = Server::start_pg(&cluster.dir.path().join("srv"), &tls, &[]).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    let mut m = Maker::new(&id);
    let seqs = a.push(&[m.calendar("c1", "Work")]).await;
    assert_eq!(seqs.len(), 1);
    drop(server);

    // A password from PGPASSWORD, not the URL (where `ps` shows it).
    let psql = |sql: &str| {
        ok(Command::new(format!("{PG}/psql"))
            .args([
                "-h",
                &cluster.dir.path().display().to_string(),
                "-U",
                "kairos",
            ])
            .args(["-p", &cluster.port.to_string()])
            .args(["-d", "postgres", "-c", sql]))
    };
    assert!(psql("ALTER ROLE kairos PASSWORD 'hunter2'"));
    std::fs::write(
        cluster.dir.path().join("data/pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    assert!(psql("SELECT pg_reload_conf()"));
    let with = |password: Option<&str>| {
        let mut c = Command::new(BIN);
        c.args(["--database", &tls, "invite", "bob"]);
        match password {
            Some(p) => c.env("PGPASSWORD", p),
            None => c.env_remove("PGPASSWORD"),
        };
        let out = c.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (done, said) = with(None);
    assert!(!done && said.contains("password"), "{said}");
    let (done, said) = with(Some("hunter2"));
    assert!(done, "{said}");
}
