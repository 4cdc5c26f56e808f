#include "tpush/fanout/result.h"

namespace tpush::fanout {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::failed: return "failed";
    case Outcome::unreachable: return "unreachable";
    case Outcome::timed_out: return "timed_out";
    case Outcome::lost: return "lost";
    case Outcome::interrupted: return "interrupted";
    case Outcome::not_started: return "not_started";
    case Outcome::stopped: return "stopped";
  }
  return "?";
}

std::optional<Outcome> outcome_from_name(std::string_view name) {
  for (int k = 0; k < kOutcomes; ++k)
    if (name == outcome_name(static_cast<Outcome>(k))) return static_cast<Outcome>(k);
  return std::nullopt;
}

}  // namespace tpush::fanout
