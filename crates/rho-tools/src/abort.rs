//! Cancellation for the file tools: an operation that sees the run's token fire (before or while
//! it works) ends with `Operation aborted`. Blocking file system work runs on tokio's blocking
//! pool so a large directory walk never stalls the runtime; an abort stops waiting for it (the
//! walkers also poll the token and stop early).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rho_agent::ToolError;
use rho_agent::tool::OPERATION_ABORTED;
use tokio_util::sync::CancellationToken;

/// The error of an aborted operation.
pub fn aborted() -> ToolError {
    ToolError::new(OPERATION_ABORTED)
}

/// Runs `work` unless `cancel` fires first.
pub async fn abortable<T>(
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(aborted()),
        result = work => result,
    }
}

/// Runs blocking `work` on the blocking pool unless `cancel` fires first.
pub async fn blocking<T: Send + 'static>(
    cancel: &CancellationToken,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    abortable(cancel, async move {
        tokio::task::spawn_blocking(work).await.map_err(|e| ToolError::new(format!("tool task failed: {e}")))?
    })
    .await
}

/// Raises the flag when dropped, so a walk on the blocking pool stops once nobody waits for it.
struct RaiseOnDrop(Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Like [`blocking`], for work that polls a stop flag: the flag is raised when `cancel` fires
/// (or this future is dropped), so the work stops instead of running on unobserved.
pub async fn blocking_stoppable<T: Send + 'static>(
    cancel: &CancellationToken,
    work: impl FnOnce(&AtomicBool) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _raise = RaiseOnDrop(stop);
    blocking(cancel, move || work(&flag)).await
}
