//! The requests of a queue of futures (`--iodepth` over the asynchronous Rust clients,
//! nfs-rs and smb2): a slot per request in flight, polled together while the worker waits
//! for the next completion. Not: a runtime; the caller blocks on its own.

use std::future::{poll_fn, Future};
use std::task::Poll;

/// A request in flight: whether it writes, and its future.
pub(crate) type Flight<F> = Vec<Option<(bool, F)>>;

/// Waits until one request in flight is done, and frees its slot: (slot, writes, output).
/// Every pending request is polled on each wake, so one submitted since the last wait
/// goes on the wire at once.
pub(crate) async fn next_done<F>(flight: &mut Flight<F>) -> (usize, bool, F::Output)
where
    F: Future + Unpin,
{
    poll_fn(|cx| {
        for (slot, f) in flight.iter_mut().enumerate() {
            if let Some((write, fut)) = f {
                if let Poll::Ready(out) = std::pin::Pin::new(fut).poll(cx) {
                    let write = *write;
                    *f = None;
                    return Poll::Ready((slot, write, out));
                }
            }
        }
        Poll::Pending
    })
    .await
}

/// [`next_done`] on `rt`, bounded by `limit`: a wait that long with no reply is an error
/// naming `client`.
pub(crate) fn wait_next<F>(
    rt: &tokio::runtime::Runtime,
    flight: &mut Flight<F>,
    limit: std::time::Duration,
    client: &str,
) -> std::io::Result<(usize, bool, F::Output)>
where
    F: Future + Unpin,
{
    rt.block_on(async { tokio::time::timeout(limit, next_done(flight)).await })
        .map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("{client}: no reply within {} s", limit.as_secs()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_done_frees_its_slot() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        type Fut = std::pin::Pin<Box<dyn Future<Output = u32>>>;
        let slow: Fut = Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            1
        });
        let fast: Fut = Box::pin(async { 2 });
        let mut flight: Flight<Fut> = vec![Some((false, slow)), None, Some((true, fast))];
        let (slot, write, out) = rt.block_on(next_done(&mut flight));
        assert_eq!((slot, write, out), (2, true, 2));
        assert!(flight[2].is_none() && flight[0].is_some());
        assert_eq!(rt.block_on(next_done(&mut flight)), (0, false, 1));
    }
}
