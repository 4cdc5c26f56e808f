// -b's grouping: each distinct output once, under its workers folded as a
// node set, stdout and stderr apart; the leader's group left out for --leader;
// --diff's reference group and the unified diffs against it.
#include <doctest/doctest.h>

#include <optional>
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

TEST_CASE("gather_output: --diff prints the most common output, then the others as diffs against it") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"w0", "w1", "w2", "w3", "w4", "w5"});
    for (std::size_t w : {0u, 2u, 3u}) g.data(w, Stream::out, "a\nb\nc\n");
    g.data(1, Stream::out, "a\nB\nc\n");
    g.data(4, Stream::out, "a\nb");  // w5: nothing, an empty output
    for (std::size_t w = 0; w < 6; ++w) g.end(w);
    g.print(std::nullopt, true);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "w[0,2-3] (3)\n" + kRule + "a\nb\nc\n" +
                              "--- w[0,2-3] (3)\n+++ w1\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" +
                              "--- w[0,2-3] (3)\n+++ w4\n@@ -1,3 +1,2 @@\n a\n-b\n-c\n+b\n"
                              "\\ No newline at end of file\n" +
                              "--- w[0,2-3] (3)\n+++ w5\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n");
  CHECK(err.contents().empty());  // no worker said anything on stderr
}

TEST_CASE("gather_output: --diff, equal counts: the group whose first worker comes first is the reference") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"n1", "n2", "n3", "n4"});
    for (std::size_t w : {1u, 2u}) g.data(w, Stream::out, "x\n");
    for (std::size_t w : {0u, 3u}) g.data(w, Stream::out, "y\n");
    for (std::size_t w = 0; w < 4; ++w) g.end(w);
    g.print(std::nullopt, true);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "n[1,4] (2)\n" + kRule + "y\n" + "--- n[1,4] (2)\n+++ n[2-3] (2)\n@@ -1 +1 @@\n-y\n+x\n");
}

TEST_CASE("gather_output: --diff on stderr, an empty reference is named on the --- lines only") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"w0", "w1", "w2"});
    for (std::size_t w = 0; w < 3; ++w) g.data(w, Stream::out, "ok\n");
    g.data(1, Stream::err, "warning: disk\n");
    for (std::size_t w = 0; w < 3; ++w) g.end(w);
    g.print(std::nullopt, true);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "w[0-2] (3)\n" + kRule + "ok\n");
  CHECK(err.contents() == "--- w[0,2] (2)\n+++ w1\n@@ -0,0 +1 @@\n+warning: disk\n");
}

TEST_CASE("gather_output: --diff with a leader, the leader's output is the reference and is not printed again") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"n1", "n2", "n3", "n4"});
    g.data(0, Stream::out, "step 1\nstep 2\n");
    g.data(1, Stream::out, "step 1\nstep 2\n");
    for (std::size_t w : {2u, 3u}) g.data(w, Stream::out, "step 1\ndiverged\n");  // more of these than the leader's
    for (std::size_t w = 0; w < 4; ++w) g.end(w);
    g.print(0, true);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == "--- n[1-2] (2)\n+++ n[3-4] (2)\n@@ -1,2 +1,2 @@\n step 1\n-step 2\n+diverged\n");
  CHECK(err.contents() == "tpush: stdout of n[1-2] (2): the same as the leader n1's\n");
}

TEST_CASE("gather_output: --diff on a terminal escapes the lines of the diffs, not the marks") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    GatherOutput g(writer, {"w0", "w1", "w2"}, {true, true});
    for (std::size_t w : {0u, 1u}) g.data(w, Stream::out, "progress\n");
    g.data(2, Stream::out, "progress\rw0: forged\n");
    for (std::size_t w = 0; w < 3; ++w) g.end(w);
    g.print(std::nullopt, true);
    writer.drain_and_stop();
  }
  CHECK(out.contents() == kRule + "w[0-1] (2)\n" + kRule + "progress\n" +
                              "--- w[0-1] (2)\n+++ w2\n@@ -1 +1 @@\n-progress\n+progress^Mw0: forged\n");
}
