// NameLookup: the eventfd becomes readable when the answer is there, the
// answer is getaddrinfo's, and a lookup dropped midway is harmless.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tpush/ssh/way/name_lookup.h"

using tpush::ssh::NameLookup;

namespace {

addrinfo stream_hints() {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  return hints;
}

bool readable_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

// The lookups of "localhost" below need it to resolve, as it does from
// /etc/hosts on any installed system and in a container (its runtime writes
// one). A minimal root made by debootstrap has no /etc/hosts: there these
// tests fail, saying what is missing, rather than with a lookup error.
void require_localhost() {
  addrinfo* found = nullptr;
  const addrinfo hints = stream_hints();
  const int rc = ::getaddrinfo("localhost", "22", &hints, &found);
  if (found) ::freeaddrinfo(found);
  const std::string why = std::string("this test needs `localhost` to resolve, and here it does not (getaddrinfo: ") +
                          ::gai_strerror(rc) + "): " +
                          (std::filesystem::exists("/etc/hosts") ? "/etc/hosts has no line for it"
                                                                 : "/etc/hosts is missing") +
                          "; add the line `127.0.0.1 localhost` to /etc/hosts";
  REQUIRE_MESSAGE(rc == 0, why);
}

}  // namespace

TEST_CASE("a name lookup wakes its fd and hands over getaddrinfo's answer") {
  require_localhost();
  NameLookup lookup("localhost", "2222", stream_hints());  // /etc/hosts, no DNS needed
  REQUIRE(lookup.fd() >= 0);
  REQUIRE(readable_within(lookup.fd(), 10000));
  CHECK(lookup.done());
  addrinfo* found = nullptr;
  REQUIRE(lookup.take(&found) == 0);
  REQUIRE(found);
  const auto* in = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  CHECK(ntohs(in->sin_port) == 2222);
  CHECK(ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK);
  ::freeaddrinfo(found);
  addrinfo* again = nullptr;
  CHECK(lookup.take(&again) == 0);  // handed over once
  CHECK(again == nullptr);
}

TEST_CASE("a lookup that fails gives getaddrinfo's error, not addresses") {
  addrinfo hints = stream_hints();
  hints.ai_flags |= AI_NUMERICHOST;  // fails at once, without asking any DNS server
  NameLookup lookup("not-an-address", "22", hints);
  REQUIRE(readable_within(lookup.fd(), 30000));
  addrinfo* found = nullptr;
  CHECK(lookup.take(&found) == EAI_NONAME);
  CHECK(found == nullptr);
}

TEST_CASE("many lookups at once, some dropped before they finish, all end") {
  require_localhost();
  std::vector<std::unique_ptr<NameLookup>> lookups;
  for (int i = 0; i < 3 * NameLookup::max_threads; ++i)
    lookups.push_back(std::make_unique<NameLookup>("localhost", "22", stream_hints()));
  for (std::size_t i = 0; i < lookups.size(); i += 2) lookups[i].reset();  // the loop gave up on them
  for (auto& l : lookups) {
    if (!l) continue;
    REQUIRE(readable_within(l->fd(), 10000));
    addrinfo* found = nullptr;
    CHECK(l->take(&found) == 0);
    if (found) ::freeaddrinfo(found);
  }
}
