// What a state machine (an SSH session, a channel, a child's pipes) waits for
// before it can make progress: the event loop turns this into epoll interest.
#pragma once

namespace tpush::util {

enum class Wait { none, read, write, read_write };

}  // namespace tpush::util
