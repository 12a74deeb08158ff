//! The lock on `auth.json` that pi's auth storage takes (the `proper-lockfile` convention), so
//! pi and rho never refresh or rewrite the file at the same time.
//!
//! The lock is a directory next to the file, `<auth.json>.lock` (the file's real path when it
//! exists, as pi locks it while refreshing), made with `mkdir`, which succeeds for one process
//! only. Its holder keeps its mtime fresh; a lock whose mtime is older than [`STALE`] belongs to
//! a process that died and is removed. pi takes it as stale after 30 s (10 s for its quick
//! reads) and touches its own every 15 s; rho touches its own every [`TOUCH_EVERY`], well inside
//! both, and only breaks a lock at pi's longer limit, so it never breaks a live pi lock.
//!
//! Waiting is a poll (the directory has nothing to wait on), backing off up to a quarter second,
//! for at most [`WAIT_AT_MOST`].

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// A lock untouched for this long is taken as left behind.
pub const STALE: Duration = Duration::from_secs(30);

/// How often the holder refreshes the lock's mtime.
pub const TOUCH_EVERY: Duration = Duration::from_secs(5);

/// How long to wait for another process's lock before giving up.
pub const WAIT_AT_MOST: Duration = Duration::from_secs(60);

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{} is held by another process (waited {}s)", path.display(), WAIT_AT_MOST.as_secs())]
    Busy { path: PathBuf },
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub struct AuthFileLock {
    dir: PathBuf,
    stop: Option<mpsc::Sender<()>>,
    toucher: Option<JoinHandle<()>>,
}

/// The lock directory for `file`: `<real path>.lock`.
pub fn lock_path(file: &Path) -> PathBuf {
    let real = std::fs::canonicalize(file).unwrap_or_else(|_| std::path::absolute(file).unwrap_or(file.to_owned()));
    let mut name = real.into_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

impl AuthFileLock {
    /// Takes the lock on `file`, waiting for another holder to let go.
    pub fn acquire(file: &Path) -> Result<Self, LockError> {
        let dir = lock_path(file);
        let io = |source| LockError::Io { path: dir.clone(), source };
        let deadline = Instant::now() + WAIT_AT_MOST;
        let mut pause = Duration::from_millis(10);
        let mut said = false;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self::hold(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
            match std::fs::metadata(&dir).and_then(|m| m.modified()) {
                Ok(modified) if is_stale(modified) => {
                    tracing::warn!("removing a stale lock {} (untouched for {}s)", dir.display(), STALE.as_secs());
                    match std::fs::remove_dir(&dir) {
                        Ok(()) => continue,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(io(e)),
                    }
                }
                Ok(_) => {}
                // Released between the two calls: try again at once.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(e)),
            }
            if Instant::now() >= deadline {
                return Err(LockError::Busy { path: dir });
            }
            if !said {
                tracing::info!("waiting for the lock {} (another process holds it)", dir.display());
                said = true;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(250));
        }
    }

    fn hold(dir: PathBuf) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let touched = dir.clone();
        let toucher = std::thread::Builder::new()
            .name("rho-auth-lock".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(TOUCH_EVERY) {
                    if let Err(e) = touch(&touched) {
                        tracing::warn!("cannot refresh the lock {}: {e}", touched.display());
                    }
                }
            })
            .ok();
        Self { dir, stop: Some(stop), toucher }
    }
}

impl Drop for AuthFileLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(toucher) = self.toucher.take() {
            let _ = toucher.join();
        }
        if let Err(e) = std::fs::remove_dir(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot release the lock {}: {e}", self.dir.display());
        }
    }
}

fn is_stale(modified: SystemTime) -> bool {
    SystemTime::now().duration_since(modified).is_ok_and(|age| age > STALE)
}

fn touch(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.set_modified(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        std::fs::write(&file, "{}").unwrap();
        let lock = AuthFileLock::acquire(&file).unwrap();
        let lock_dir = dir.path().join("auth.json.lock");
        assert!(lock_dir.is_dir(), "pi's lock directory is made");
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let file = file.clone();
            std::thread::spawn(move || {
                let second = AuthFileLock::acquire(&file).unwrap();
                tx.send(()).unwrap();
                drop(second);
            })
        };
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "the second holder waits");
        drop(lock);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        assert!(!lock_dir.exists(), "released");
    }

    #[test]
    fn a_stale_lock_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        std::fs::write(&file, "{}").unwrap();
        let lock_dir = dir.path().join("auth.json.lock");
        std::fs::create_dir(&lock_dir).unwrap();
        let old = SystemTime::now() - STALE - Duration::from_secs(5);
        std::fs::File::open(&lock_dir).unwrap().set_modified(old).unwrap();
        let lock = AuthFileLock::acquire(&file).unwrap();
        drop(lock);
        assert!(!lock_dir.exists());
    }

    #[test]
    fn a_symlinked_file_is_locked_at_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "{}").unwrap();
        let link = dir.path().join("auth.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(lock_path(&link), canonical.join("real.json.lock"));
    }
}
