//! Where passwords live: never in the database. The OS secret store
//! (`keyring`: Secret Service on Linux, Credential Manager on Windows,
//! Keychain on macOS), or a file readable by its owner only (mode 0600)
//! when `KAIROS_SECRET_STORE=file` is set or no secret service answers.
//! The database keeps only a reference (`service`/`account` names).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{CaldavError, Result};

/// The keyring "service" under which Kairos files its CalDAV passwords.
pub const SERVICE: &str = "kairos-caldav";

/// A place to keep one secret per reference.
pub trait SecretStore {
    /// Stores `secret` under `key`, replacing any earlier one.
    ///
    /// # Errors
    /// The store refused or could not be reached.
    fn set(&self, key: &str, secret: &str) -> Result<()>;
    /// The secret under `key`, if any.
    ///
    /// # Errors
    /// The store could not be read.
    fn get(&self, key: &str) -> Result<Option<String>>;
    /// Forgets `key` (no error when it was not there).
    ///
    /// # Errors
    /// The store could not be written.
    fn delete(&self, key: &str) -> Result<()>;
    /// Says where secrets go, for the person.
    fn describe(&self) -> String;
}

/// The OS secret store through `keyring`.
#[derive(Debug, Default)]
pub struct KeyringStore;

fn kerr(e: &keyring::Error) -> CaldavError {
    CaldavError::Secret(format!("the OS secret store: {e}"))
}

impl SecretStore for KeyringStore {
    fn set(&self, key: &str, secret: &str) -> Result<()> {
        let e = keyring::Entry::new(SERVICE, key).map_err(|e| kerr(&e))?;
        e.set_password(secret).map_err(|e| kerr(&e))
    }
    fn get(&self, key: &str) -> Result<Option<String>> {
        let e = keyring::Entry::new(SERVICE, key).map_err(|e| kerr(&e))?;
        match e.get_password() {
            Ok(p) => Ok(Some(p)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(kerr(&e)),
        }
    }
    fn delete(&self, key: &str) -> Result<()> {
        let e = keyring::Entry::new(SERVICE, key).map_err(|e| kerr(&e))?;
        match e.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(kerr(&e)),
        }
    }
    fn describe(&self) -> String {
        "the OS secret store".to_owned()
    }
}

/// A JSON file of `{key: secret}`, created and rewritten with mode 0600.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// The store in `path` (created on first write).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file beside database `db`: `<db>-secrets`.
    #[must_use]
    pub fn beside(db: &Path) -> Self {
        let mut p = db.as_os_str().to_owned();
        p.push("-secrets");
        Self::new(PathBuf::from(p))
    }

    fn read_all(&self) -> Result<BTreeMap<String, String>> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                CaldavError::Secret(format!(
                    "{} is not a Kairos secrets file ({e}); move it away to start afresh",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(CaldavError::Secret(format!(
                "cannot read {}: {e}",
                self.path.display()
            ))),
        }
    }

    fn write_all(&self, all: &BTreeMap<String, String>) -> Result<()> {
        let io = |e: std::io::Error| {
            CaldavError::Secret(format!("cannot write {}: {e}", self.path.display()))
        };
        let text =
            serde_json::to_vec_pretty(all).map_err(|e| CaldavError::Secret(e.to_string()))?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        kairos_engine::platform::perms::on_create(&mut opts);
        let mut f = opts.open(&tmp).map_err(io)?;
        // An older file may have been made before the mode was set.
        kairos_engine::platform::perms::restrict(&tmp);
        std::io::Write::write_all(&mut f, &text).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

impl SecretStore for FileStore {
    fn set(&self, key: &str, secret: &str) -> Result<()> {
        let mut all = self.read_all()?;
        all.insert(key.to_owned(), secret.to_owned());
        self.write_all(&all)
    }
    fn get(&self, key: &str) -> Result<Option<String>> {
        Ok(self.read_all()?.remove(key))
    }
    fn delete(&self, key: &str) -> Result<()> {
        let mut all = self.read_all()?;
        if all.remove(key).is_some() {
            self.write_all(&all)?;
        }
        Ok(())
    }
    fn describe(&self) -> String {
        format!("{} (readable by you only)", self.path.display())
    }
}

/// The secret store to use for database `db`, and a note when it is the
/// file because the OS store did not answer.
///
/// `KAIROS_SECRET_STORE=file` chooses the file; `keyring` insists on the OS
/// store; unset tries the OS store and falls back to the file.
#[must_use]
pub fn for_database(db: &Path, choice: Option<&str>) -> (Box<dyn SecretStore>, Option<String>) {
    match choice {
        Some("file") => (Box::new(FileStore::beside(db)), None),
        Some("keyring") => (Box::new(KeyringStore), None),
        _ => match keyring::Entry::store_status() {
            Ok(()) if probe_keyring() => (Box::new(KeyringStore), None),
            Ok(()) => fallback(db, "it did not answer"),
            Err(e) => fallback(db, &e.to_string()),
        },
    }
}

/// Whether the OS store answers a read (a missing entry is an answer).
fn probe_keyring() -> bool {
    KeyringStore.get("kairos-probe").is_ok()
}

fn fallback(db: &Path, why: &str) -> (Box<dyn SecretStore>, Option<String>) {
    let f = FileStore::beside(db);
    let note = format!(
        "no OS secret store ({why}): passwords are kept in {} instead",
        f.describe()
    );
    (Box::new(f), Some(note))
}
