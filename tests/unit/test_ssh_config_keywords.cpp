// The keyword table.
#include <doctest/doctest.h>

#include "tpush/ssh_config/keywords.h"

using namespace tpush::ssh_config;

TEST_CASE("ssh_config keywords: lookups ignore case") {
  const KeywordInfo* kw = find_keyword("hostname");
  REQUIRE(kw != nullptr);
  CHECK(kw->name == "HostName");
  CHECK(kw->key == ConfigKey::hostname);
  CHECK(find_keyword("STRICTHOSTKEYCHECKING")->key == ConfigKey::strict_host_key_checking);
  CHECK(find_keyword("identityfile2")->key == ConfigKey::identity_file);
  CHECK(find_keyword("setuptimeout")->key == ConfigKey::server_alive_interval);  // Debian
  CHECK(find_keyword("gssapikeyexchange")->key == ConfigKey::other);            // Debian
  CHECK(find_keyword("rsaauthentication")->key == ConfigKey::unsupported);
  CHECK(find_keyword("usekeychain") == nullptr);  // macOS only
  CHECK(find_keyword("tag") == nullptr);          // newer than 9.2
}

TEST_CASE("ssh_config keywords: did you mean") {
  CHECK(closest_keyword("hostnme") == "HostName");
  CHECK(closest_keyword("identityfiel") == "IdentityFile");
  CHECK(closest_keyword("stricthostkeycheck") == "StrictHostKeyChecking");
  CHECK(closest_keyword("xyzzy") == "");
  CHECK(closest_keyword("ciphr") == "Ciphers");  // not the deprecated "Cipher"
  CHECK(unknown_keyword_message("hostnme") ==
        "unknown keyword \"hostnme\" (did you mean \"HostName\"?); ssh refuses it too. If a newer ssh knows "
        "it, write \"IgnoreUnknown hostnme\" above this line");
  CHECK(unknown_keyword_message("usekeychain") ==
        "unknown keyword \"usekeychain\"; ssh refuses it too. If a newer ssh knows it, write \"IgnoreUnknown "
        "usekeychain\" above this line");
}
