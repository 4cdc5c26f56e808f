// A key pair made for one relayed copy (tpush cp --relay): workers use it to
// pass the bytes on to the next worker over their own `ssh`, and every worker
// accepts it only for that (see relay_script.h). It is made fresh for each
// transfer, never written on the client, and worthless once the transfer ends.
#pragma once

#include <string>

namespace tpush::ssh {

struct HopKey {
  std::string private_text;  // unencrypted OpenSSH format, as ssh-keygen writes it
  std::string public_line;   // "ssh-ed25519 AAAA... COMMENT", as in authorized_keys
};

// A new ed25519 key pair from OpenSSL's random generator. Throws SetupError
// when OpenSSL cannot make one.
HopKey make_hop_key(const std::string& comment);

}  // namespace tpush::ssh
