// Waiting for a key from the terminal beside the run's signalfd: what the
// line editor (interactive prompt) and --live's last screen both do.
#pragma once

namespace tpush::util {

enum class KeyWait {
  key,        // bytes to read on the key descriptor
  signal,     // a signal is pending on the signalfd: the caller reads it
  keys_gone,  // the terminal hung up or failed, nothing left to read
  timeout,    // nothing within the time (EINTR counts as this too)
  failed,     // poll() failed
};

// Waits up to `timeout_ms` for `key_fd` or `signal_fd` (-1: none). A pending
// signal is reported first.
KeyWait wait_key_or_signal(int key_fd, int signal_fd, int timeout_ms);

}  // namespace tpush::util
