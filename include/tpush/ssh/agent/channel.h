// An agent channel a worker opened on tpush's session (a command there used
// the agent tpush forwards): its bytes carried between libssh2 and an
// AgentConversation, without blocking, until the worker closes it.
#pragma once

#include <string>

#include "tpush/ssh/agent/server.h"

typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::ssh {

class AgentChannel {
 public:
  AgentChannel(LIBSSH2_CHANNEL* channel, AgentPolicy& policy) : channel_(channel), conversation_(policy) {}
  AgentChannel(const AgentChannel&) = delete;
  AgentChannel& operator=(const AgentChannel&) = delete;

  // Reads requests, writes answers, closes once the worker is done. False
  // once the channel is gone.
  bool advance();
  // An answer (or part of one) is waiting to be written.
  bool answer_waiting() { return channel_ && !conversation_.output().empty(); }
  // Forgets the channel without touching the network (the session frees it,
  // as it does one still open when the job ends).
  void release() { channel_ = nullptr; }

 private:
  LIBSSH2_CHANNEL* channel_;
  AgentConversation conversation_;
  bool closing_ = false, closed_ = false;
};

}  // namespace tpush::ssh
