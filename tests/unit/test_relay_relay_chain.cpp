// Who feeds whom in a relayed copy, and what happens when a link breaks.
#include <doctest/doctest.h>

#include <sstream>

#include "tpush/relay/relay_chain.h"

using tpush::relay::RelayChain;

namespace {

// The orders as text: "0<-tpush>1" is worker 0 told to receive, fed by
// tpush, passing on to 1; "2>-" receives and passes nothing on; "feed 3" is
// tpush feeding a worker already receiving; "#2" follows an attempt after the first.
std::string text(const std::vector<RelayChain::Order>& orders) {
  std::ostringstream out;
  for (const auto& o : orders) {
    if (out.tellp() > 0) out << " ";
    const std::string attempt = o.attempt > 1 ? "#" + std::to_string(o.attempt) : "";
    if (!o.go) {
      out << "feed " << o.worker << attempt;
      continue;
    }
    out << o.worker << attempt << (o.feed ? "<-tpush" : "") << ">" << (o.next ? std::to_string(*o.next) : "-");
  }
  return out.str();
}

RelayChain all_ready(std::size_t n) {
  RelayChain c(n);
  for (std::size_t i = 0; i < n; ++i) c.ready(i);
  return c;
}

}  // namespace

TEST_CASE("relay chain: once everyone is set up, one chain in worker order, fed once by tpush") {
  RelayChain c(4);
  c.ready(2);
  c.ready(0);
  c.ready(3);
  CHECK(c.take_orders().empty());  // worker 1 is still setting up
  c.ready(1);
  CHECK(text(c.take_orders()) == "0<-tpush>1 1>2 2>3 3>-");
  CHECK_FALSE(c.sender(0));
  CHECK(c.sender(2) == 1u);
  for (std::size_t i = 0; i < 4; ++i) c.stored(i);
  CHECK(c.settled());
  CHECK(c.take_orders().empty());
}

TEST_CASE("relay chain: one chain per group (a TPU slice), each fed by tpush") {
  RelayChain c(std::vector<std::size_t>{0, 0, 1, 1, 0, 2});
  for (std::size_t i = 0; i < 6; ++i) c.ready(i);
  CHECK(text(c.take_orders()) == "0<-tpush>1 1>4 4>- 2<-tpush>3 3>- 5<-tpush>-");
  SUBCASE("a break re-chains within the group") {
    c.broken(1);
    c.broken(4);
    CHECK(text(c.take_orders()) == "1#2<-tpush>4 4#2>-");
  }
}

TEST_CASE("relay chain: a worker that never came is left out") {
  RelayChain c(3);
  c.ready(0);
  c.out(1, false);
  c.ready(2);
  CHECK(text(c.take_orders()) == "0<-tpush>2 2>-");
}

TEST_CASE("relay chain: a sender lost mid-chain: tpush feeds its next one, and the chain carries on") {
  RelayChain c = all_ready(5);
  c.take_orders();
  c.out(1, true);
  CHECK(text(c.take_orders()) == "feed 2");
  CHECK_FALSE(c.sender(2));
  CHECK(c.sender(3) == 2u);
  SUBCASE("a hop that failed is the same") {
    c.hop_failed(3);
    CHECK(text(c.take_orders()) == "feed 4");
    c.hop_failed(3);
    CHECK(c.take_orders().empty());  // once
  }
}

TEST_CASE("relay chain: short copies wait for everyone behind the break, then one new chain") {
  RelayChain c = all_ready(5);
  c.take_orders();
  c.stored(0);
  c.broken(2);  // its sender (1) sent it something else
  CHECK(c.take_orders().empty());  // 3 and 4 are still receiving from 2
  c.broken(3);
  c.stored(1);
  CHECK(c.take_orders().empty());
  c.broken(4);
  CHECK(text(c.take_orders()) == "2#2<-tpush>3 3#2>4 4#2>-");
  CHECK(c.sender(3) == 2u);
  CHECK(c.attempt(3) == 2);
  SUBCASE("the last try comes straight from tpush, and a third failure is the end") {
    c.broken(2);
    c.broken(3);
    c.broken(4);
    CHECK(text(c.take_orders()) == "2#3<-tpush>- 3#3<-tpush>- 4#3<-tpush>-");
    c.stored(2);
    c.stored(3);
    c.broken(4);
    CHECK(c.exhausted(4));
    CHECK_FALSE(c.exhausted(3));
    CHECK(c.settled());
    CHECK(c.take_orders().empty());
  }
}

TEST_CASE("relay chain: a worker fed by tpush after its sender was lost, whose copy still broke, starts again") {
  RelayChain c = all_ready(4);
  c.take_orders();
  c.out(0, true);
  CHECK(text(c.take_orders()) == "feed 1");
  c.broken(1);  // what it had from 0 was cut short, and 2 and 3 had it from 1
  CHECK(c.take_orders().empty());
  c.broken(2);
  c.broken(3);
  CHECK(text(c.take_orders()) == "1#2<-tpush>2 2#2>3 3#2>-");
}

TEST_CASE("relay chain: behind a worker tpush rescued, those that break wait until it has stored or broken") {
  // Worker 1's sender (0) was lost mid-stream: tpush feeds 1, but if some of
  // 0's bytes had arrived the feed stops (kFeedCut) and 1's copy, and 2's and
  // 3's from it, come up short, in any order and before tpush hears of the
  // cut. Those that report first wait for the rest behind the break.
  RelayChain c = all_ready(4);
  c.take_orders();
  c.out(0, true);
  CHECK(text(c.take_orders()) == "feed 1");
  c.broken(3);
  CHECK(c.take_orders().empty());  // 1 and 2 are still receiving what may break
  c.broken(2);
  CHECK(c.take_orders().empty());
  SUBCASE("the rescue broke too: one new chain") {
    c.broken(1);
    CHECK(text(c.take_orders()) == "1#2<-tpush>2 2#2>3 3#2>-");
    c.broken(3);  // the new attempt is fed afresh: nothing to wait for
    CHECK(text(c.take_orders()) == "3#3<-tpush>-");
  }
  SUBCASE("the rescue stored: those behind it start again without it") {
    c.stored(1);
    CHECK(text(c.take_orders()) == "2#2<-tpush>3 3#2>-");
  }
}
