#include "tpush/util/system.h"

#include <sys/resource.h>

#include <algorithm>

namespace tpush::util {

std::size_t raise_open_file_limit(std::size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  if (lim.rlim_cur < wanted) {
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(wanted, lim.rlim_max);
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_cur == RLIM_INFINITY ? wanted : static_cast<std::size_t>(lim.rlim_cur);
}

}  // namespace tpush::util
