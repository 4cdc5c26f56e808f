#include "tpush/output/out_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "tpush/util/error.h"
#include "tpush/util/file.h"

namespace tpush::output {
namespace {


std::string file_name(std::string label) {
  for (char& c : label)
    if (c == '/') c = '_';
  if (label == "." || label == "..") label = "_" + label;
  return label;
}

}  // namespace

OutDir::OutDir(fanout::OutputSink& shown, std::filesystem::path dir, std::vector<WorkerIdentity> workers)
    : shown_(shown), dir_(std::move(dir)), workers_(std::move(workers)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw SetupError("--out-dir " + dir_.string() + ": cannot create the directory (" +
                     (ec ? ec.message() : std::string("not a directory")) + "); choose another with --out-dir DIR");
  if (::access(dir_.c_str(), W_OK) != 0)
    throw SetupError("--out-dir " + dir_.string() + ": not writable (" + std::strerror(errno) +
                     "); choose another with --out-dir DIR");
  for (auto& f : fds_) f.assign(workers_.size(), -1);
}

OutDir::~OutDir() {
  for (std::size_t w = 0; w < workers_.size(); ++w) close_files(w);
}

std::filesystem::path OutDir::file_of(std::size_t worker, fanout::Stream stream) const {
  return dir_ / (file_name(workers_[worker].label) + (stream == fanout::Stream::out ? ".out" : ".err"));
}

void OutDir::started(std::size_t worker) {
  for (auto stream : {fanout::Stream::out, fanout::Stream::err}) {
    int& fd = fds_[index_of(stream)][worker];
    if (fd >= 0) ::close(fd);
    fd = ::open(file_of(worker, stream).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) failed(worker, stream, errno);
  }
  shown_.started(worker);
}

void OutDir::data(std::size_t worker, fanout::Stream stream, std::string_view bytes) {
  int& fd = fds_[index_of(stream)][worker];
  if (fd >= 0 && !util::write_all(fd, bytes)) {
    const int err = errno;
    ::close(fd);
    fd = -1;
    failed(worker, stream, err);
  }
  shown_.data(worker, stream, bytes);
}

void OutDir::end(std::size_t worker) { shown_.end(worker); }

void OutDir::finished(std::size_t worker, const fanout::WorkerResult& result) {
  close_files(worker);
  shown_.finished(worker, result);
}

void OutDir::close_files(std::size_t worker) {
  for (auto& f : fds_) {
    if (f[worker] >= 0) ::close(f[worker]);
    f[worker] = -1;
  }
}

void OutDir::failed(std::size_t worker, fanout::Stream stream, int err) {
  incomplete_ = true;
  shown_.notice("tpush: " + workers_[worker].label + ": cannot write " + file_of(worker, stream).string() + ": " +
                std::strerror(err) + "; its output goes on to the terminal only (free space, or choose another --out-dir)\n");
}

bool OutDir::write_results(const std::vector<std::size_t>& workers, const std::vector<fanout::WorkerResult>& results,
                           double seconds, int exit_code) {
  std::string text = "{\"workers\":[\n";
  for (std::size_t k = 0; k < results.size() && k < workers.size(); ++k)
    text += (k ? ",\n" : "") + worker_json(workers_[workers[k]], results[k]);
  text += "\n],\n\"summary\":" + summary_json(results, seconds, exit_code) + "}\n";
  const auto path = dir_ / "results.json";
  if (const std::string err = util::write_file_atomic(path, text); !err.empty()) {
    incomplete_ = true;
    shown_.notice("tpush: cannot write " + path.string() + ": " + err + "\n");
    return false;
  }
  return true;
}

}  // namespace tpush::output
