//! The share of its congestion window a sender in loss recovery leaves unused.
//!
//! After a loss the window is cut to [`RECOVERY_WINDOW`] of the one that held the flight,
//! and a sender with data fills its pipe up to that window at once (RFC 6937 §3,
//! PRR-SSRB). A pipe that stays below it with the receiver's window open is a sender with
//! nothing more to send: its send buffer full of the data held above the holes, or its
//! application writing no more. [`UnusedWindow`] follows that share from each new data
//! segment through the ACKs that change the pipe until the next one, and integrates it.

use crate::time::Timestamp;

/// The share of the congestion window the recovery leaves that CUBIC's cut keeps: the
/// window after a loss is β = 0.7 of the one before it (RFC 9438 §4.6; Linux
/// `bictcp_recalc_ssthresh`, beta = 717/1024), and Reno's 0.5 (RFC 5681 eq. 4) leaves less.
/// CUBIC is the default congestion control of Linux, Windows and macOS.
pub const RECOVERY_WINDOW: f64 = 0.7;

/// The share of its congestion window a sender in loss recovery left unused, its pipe `pipe`
/// (outstanding bytes less those reported out of the network: SACKed, counted by duplicate
/// ACKs, presumed lost; RFC 6675's pipe, Linux `tcp_packets_in_flight`) after a loss met
/// with `at_loss` bytes in flight. The window the recovery leaves is [`RECOVERY_WINDOW`] of
/// the one that held that flight, and the sender may fill its pipe up to it: the cumulative
/// ACK's advance lets a proportional rate reduction send up to the window at once (RFC
/// 6937 §3, PRR-SSRB: `prr_delivered - prr_out` accrues for every segment reported
/// delivered), and a NewReno sender's window is inflated by a segment for each duplicate
/// ACK (RFC 5681 §3.2 step 4). A pipe that stays below it with the receiver's window open
/// is a sender with nothing more to send: its send buffer held the outstanding data, most
/// of it already above the holes at the receiver (Linux counts every unacknowledged byte
/// in `sk_wmem_queued`), or its application wrote no more. 0 when nothing was in flight.
pub fn window_unused(pipe: u64, at_loss: u64) -> f64 {
    if at_loss == 0 {
        return 0.0;
    }
    let window = RECOVERY_WINDOW * at_loss as f64;
    (1.0 - pipe as f64 / window).clamp(0.0, 1.0)
}

/// The share of the window a sender left unused since its last new data, as the ACKs in a
/// loss recovery changed its pipe.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnusedWindow {
    /// The share the last new data segment left; 0 outside a recovery.
    last: f64,
    /// In a loss recovery: the flight the sender had when it began (its last new data's
    /// before the recovery), which bounds the window the recovery leaves.
    at_loss: Option<u64>,
    /// Since the last new data: the latest change (its time, the loop through the sender
    /// after its ACK, and the share then) and the share integrated over the time before it
    /// from the last new data (share x ns).
    since: Option<(Timestamp, f64)>,
    integral: f64,
}

impl UnusedWindow {
    /// New data went out leaving `pipe` in the network, the sender busy (not waiting on its
    /// application) or not, `prev_flight` the flight after the data before it (the flight
    /// at the loss, when this is the recovery's first).
    pub fn on_new_data(&mut self, recovering: bool, busy: bool, pipe: u64, prev_flight: u64) {
        self.last = match (recovering, busy) {
            (true, true) => window_unused(pipe, *self.at_loss.get_or_insert(prev_flight)),
            (true, false) => 0.0,
            (false, _) => {
                self.at_loss = None;
                0.0
            }
        };
        self.since = None;
        self.integral = 0.0;
    }

    /// An ACK reached the sender at `at` (the last new data at `t0`) leaving `pipe` in the
    /// network; `room`: the receiver's window had room for another segment (a window without
    /// room held the sender: not its doing).
    pub fn on_ack(&mut self, at: Timestamp, t0: Timestamp, recovering: bool, room: bool, pipe: u64, prev_flight: u64) {
        let share = if !recovering {
            self.at_loss = None;
            0.0
        } else if room {
            window_unused(pipe, *self.at_loss.get_or_insert(prev_flight))
        } else {
            0.0
        };
        let (since, before) = self.since.unwrap_or((t0, self.last));
        let at = at.max(since);
        self.integral += before * (at - since).nanos() as f64;
        self.since = Some((at, share));
    }

    /// The share of the window left unused over [from, to), the last new data at `t0`
    /// (`from` is earlier when a burst ended there): the last data's share until the ACKs
    /// changed it, then theirs.
    pub fn over(&self, from: Timestamp, t0: Timestamp, to: Timestamp) -> f64 {
        let span = (to - from).nanos();
        if span <= 0 {
            return self.last;
        }
        let (at, now) = self.since.unwrap_or((t0, self.last));
        let before_t0 = self.last * (t0 - from).nanos().max(0) as f64;
        let after = now * (to - at.min(to)).nanos().max(0) as f64;
        ((before_t0 + self.integral + after) / span as f64).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(1_000_000_000 + ms * 1_000_000)
    }

    #[test]
    fn the_window_unused_is_what_the_pipe_leaves_of_the_recoverys_window() {
        // 100 kB in flight at the loss: the recovery leaves a window of 70 kB.
        assert_eq!(window_unused(0, 100_000), 1.0);
        assert!((window_unused(35_000, 100_000) - 0.5).abs() < 1e-9);
        assert_eq!(window_unused(70_000, 100_000), 0.0);
        assert_eq!(window_unused(90_000, 100_000), 0.0);
        assert_eq!(window_unused(10, 0), 0.0, "nothing in flight at the loss says nothing");
    }

    #[test]
    fn the_unused_share_follows_the_acks_between_two_sends() {
        // 100 kB in flight at the loss; the first data of the recovery leaves 56 kB in the
        // pipe (0.2 of the 70 kB window unused); an ACK at 40 ms empties it: over [0, 100)
        // the average is (0.2 x 40 + 1.0 x 60) / 100.
        let mut w = UnusedWindow::default();
        w.on_new_data(true, true, 56_000, 100_000);
        w.on_ack(t(40), t(0), true, true, 0, 100_000);
        let u = w.over(t(0), t(0), t(100));
        assert!((u - 0.68).abs() < 1e-9, "{u}");
        // No ACK changed it: the last data's share throughout, the burst before it too.
        let mut w = UnusedWindow::default();
        w.on_new_data(true, true, 35_000, 100_000);
        assert!((w.over(t(-10), t(0), t(100)) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn the_window_at_the_loss_holds_until_the_recovery_ends() {
        let mut w = UnusedWindow::default();
        w.on_new_data(true, true, 35_000, 100_000);
        // The flight before the next data is no new loss's: the window stays 70 kB.
        w.on_new_data(true, true, 35_000, 40_000);
        assert!((w.over(t(0), t(0), t(10)) - 0.5).abs() < 1e-9);
        // A window without room held the sender, and outside a recovery nothing is unused.
        w.on_ack(t(5), t(0), true, false, 0, 40_000);
        assert!((w.over(t(0), t(0), t(10)) - 0.25).abs() < 1e-9);
        w.on_new_data(false, true, 0, 40_000);
        assert_eq!(w.over(t(0), t(0), t(10)), 0.0);
        // A new recovery takes its own flight at the loss.
        w.on_new_data(true, true, 14_000, 40_000);
        assert!((w.over(t(0), t(0), t(10)) - 0.5).abs() < 1e-9);
    }
}
