#pragma once

namespace tpush::ssh {

// What a state machine waits for before it can make progress.
enum class Wait { none, read, write, read_write };

}  // namespace tpush::ssh
