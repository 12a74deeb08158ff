//! Operating-system errors worded the way the reference reports them to the model
//! (`ENOENT: no such file or directory, open '/abs/path'`), so a model that learned to read pi's
//! tool errors reads rho's the same way.

use std::io;
use std::path::Path;

/// The errno code name and libuv's description of it.
fn code_and_text(err: &io::Error) -> Option<(&'static str, &'static str)> {
    use nix::errno::Errno;
    let errno = Errno::from_raw(err.raw_os_error()?);
    Some(match errno {
        Errno::ENOENT => ("ENOENT", "no such file or directory"),
        Errno::EACCES => ("EACCES", "permission denied"),
        Errno::EPERM => ("EPERM", "operation not permitted"),
        Errno::EISDIR => ("EISDIR", "illegal operation on a directory"),
        Errno::ENOTDIR => ("ENOTDIR", "not a directory"),
        Errno::EEXIST => ("EEXIST", "file already exists"),
        Errno::ENOSPC => ("ENOSPC", "no space left on device"),
        Errno::EROFS => ("EROFS", "read-only file system"),
        Errno::ELOOP => ("ELOOP", "too many symbolic links encountered"),
        Errno::ENAMETOOLONG => ("ENAMETOOLONG", "name too long"),
        Errno::EMFILE => ("EMFILE", "too many open files"),
        Errno::EBUSY => ("EBUSY", "resource busy or locked"),
        Errno::EIO => ("EIO", "i/o error"),
        Errno::ETXTBSY => ("ETXTBSY", "text file is busy"),
        Errno::EFBIG => ("EFBIG", "file too large"),
        _ => return None,
    })
}

/// `<CODE>: <description>, <syscall> '<path>'`, or the plain error text for errors without an
/// errno.
pub fn describe(err: &io::Error, syscall: &str, path: &Path) -> String {
    match code_and_text(err) {
        Some((code, text)) => format!("{code}: {text}, {syscall} '{}'", path.display()),
        None => format!("{err}, {syscall} '{}'", path.display()),
    }
}

/// The error of reading a directory as a file: `EISDIR: illegal operation on a directory, read`.
pub const EISDIR_READ: &str = "EISDIR: illegal operation on a directory, read";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_errors_like_the_reference() {
        let err = io::Error::from_raw_os_error(nix::libc::ENOENT);
        assert_eq!(describe(&err, "access", Path::new("/tmp/x")), "ENOENT: no such file or directory, access '/tmp/x'");
        let err = io::Error::from_raw_os_error(nix::libc::EACCES);
        assert_eq!(describe(&err, "open", Path::new("/a")), "EACCES: permission denied, open '/a'");
    }
}
