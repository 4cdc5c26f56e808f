// Placeholder while the live view is written: every call does nothing yet.
#include "tpush/output/live_view.h"

namespace tpush::output {

struct LiveView::Impl {};

LiveView::LiveView(std::vector<std::string>, int) : impl_(std::make_unique<Impl>()) {}
LiveView::~LiveView() = default;
void LiveView::data(std::size_t, fanout::Stream, std::string_view) {}
void LiveView::end(std::size_t) {}
void LiveView::started(std::size_t) {}
void LiveView::finished(std::size_t, const fanout::WorkerResult&) {}
void LiveView::flush() {}
void LiveView::notice(std::string) {}
int LiveView::fd() const { return -1; }
util::Wait LiveView::wait() const { return util::Wait::none; }
void LiveView::advance(Clock::time_point) {}
void LiveView::tick(Clock::time_point) {}
void LiveView::hold_until_quit(int) {}
void LiveView::close() {}

}  // namespace tpush::output
