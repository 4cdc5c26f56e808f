#include "tpush/util/shared_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tpush/util/error.h"

namespace tpush::util {

std::shared_ptr<const SharedBytes> SharedBytes::map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SetupError("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw SetupError("cannot read " + path + ": " + (S_ISREG(st.st_mode) ? std::strerror(err) : "not a regular file"));
  }
  std::shared_ptr<SharedBytes> b(new SharedBytes());
  b->size_ = static_cast<std::uint64_t>(st.st_size);
  if (b->size_ > 0 && b->size_ < (1u << 20)) {  // small: read into memory
    b->owned_.resize(b->size_);
    std::size_t off = 0;
    while (off < b->owned_.size()) {
      const ssize_t n = ::read(fd, b->owned_.data() + off, b->owned_.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        throw SetupError("cannot read " + path + ": " + (n < 0 ? std::strerror(err) : "file shrank while reading"));
      }
      off += static_cast<std::size_t>(n);
    }
    b->data_ = b->owned_.data();
  } else if (b->size_ > 0) {
    void* p = ::mmap(nullptr, b->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw SetupError("cannot read " + path + ": " + std::strerror(err));
    }
    ::madvise(p, b->size_, MADV_SEQUENTIAL);
    b->data_ = static_cast<const char*>(p);
    b->mapped_ = true;
  }
  ::close(fd);
  return b;
}

std::shared_ptr<const SharedBytes> SharedBytes::from_string(std::string bytes) {
  std::shared_ptr<SharedBytes> b(new SharedBytes());
  b->owned_ = std::move(bytes);
  b->data_ = b->owned_.data();
  b->size_ = b->owned_.size();
  return b;
}

SharedBytes::~SharedBytes() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace tpush::util
