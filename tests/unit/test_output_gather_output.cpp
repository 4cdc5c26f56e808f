// -b's grouping: each distinct output once, under its workers folded as a
// node set, stdout and stderr apart; the leader's group left out for --leader.
#include <doctest/doctest.h>

#include <string>

#include "test_support.h"
#include "tpush/output/gather_output.h"

namespace {

using tpush::fanout::Stream;
using tpush::output::GatherOutput;
using tpush::output::Writer;

const std::string kRule = "---------------\n";

}  // namespace

TEST_CASE("gather_output: identical outputs are one group, silent workers are listed") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"w0", "w1", "w2", "w3", "w4", "w5"});
    for (std::size_t w : {0u, 1u, 3u}) g.data(w, Stream::out, "same\n");
    g.data(2, Stream::out, "diff");  // no newline: one is added when printed
    g.data(2, Stream::err, "oops\n");
    for (std::size_t w = 0; w < 5; ++w) g.end(w);  // w5 never ended: counts as silent
    g.print();
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "w[0-1,3] (3)\n" + kRule + "same\n" + kRule + "w2\n" + kRule + "diff\n" +
                              kRule + "w[4-5] (2)\n" + kRule + "(no output)\n");
  CHECK(err.contents() == kRule + "w2\n" + kRule + "oops\n");
}

TEST_CASE("gather_output: with a leader, its group is one line on stderr") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"n1", "n2", "n3"});
    g.data(0, Stream::out, "step 1\n");
    g.data(1, Stream::out, "step 1\n");
    g.data(2, Stream::out, "step 2\n");
    for (std::size_t w = 0; w < 3; ++w) g.end(w);
    g.print(0);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "n3\n" + kRule + "step 2\n");
  CHECK(err.contents() == "tpush: stdout of n[1-2] (2): the same as the leader n1's\n");
}
