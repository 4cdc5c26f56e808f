#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/identity/user_certificate.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <cctype>
#include <cstring>

#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

namespace tpush::ssh {
namespace {

using Bignum = std::unique_ptr<BIGNUM, decltype(&BN_clear_free)>;

Bignum bignum(std::string_view magnitude) {
  return {BN_bin2bn(reinterpret_cast<const unsigned char*>(magnitude.data()),
                    static_cast<int>(magnitude.size()), nullptr),
          &BN_clear_free};
}

std::string bignum_bytes(const BIGNUM* n) {
  std::string out(static_cast<std::size_t>(BN_num_bytes(n)), '\0');
  BN_bn2bin(n, reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

struct Curve {
  std::string_view ssh_name;  // as in "ecdsa-sha2-nistp256"
  const char* openssl_group;
  const EVP_MD* (*digest)();
};
constexpr Curve kCurves[] = {
    {"nistp256", "prime256v1", &EVP_sha256},
    {"nistp384", "secp384r1", &EVP_sha384},
    {"nistp521", "secp521r1", &EVP_sha512},
};

const Curve* curve_by_ssh_name(std::string_view name) {
  for (const auto& c : kCurves)
    if (c.ssh_name == name) return &c;
  return nullptr;
}

// Builds a key from OSSL_PARAMs (OpenSSL's provider-native form).
EVP_PKEY* key_from_params(const char* algorithm, OSSL_PARAM_BLD* bld) {
  EVP_PKEY* key = nullptr;
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, algorithm, nullptr);
  if (params && ctx && EVP_PKEY_fromdata_init(ctx) == 1)
    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, params);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  return key;
}

// RSA from the OpenSSH private section (n e d iqmp p q). OpenSSH does not store
// d mod (p-1) and d mod (q-1); they are computed so that signing uses the CRT.
EVP_PKEY* rsa_key(wire::Reader& r) {
  const auto n = r.string(), e = r.string(), d = r.string(), iqmp = r.string(), p = r.string(),
             q = r.string();
  if (!q) return nullptr;
  Bignum bn_d = bignum(*d), bn_p = bignum(*p), bn_q = bignum(*q);
  Bignum dmp1(BN_new(), &BN_clear_free), dmq1(BN_new(), &BN_clear_free), p1(BN_new(), &BN_clear_free),
      q1(BN_new(), &BN_clear_free);
  std::unique_ptr<BN_CTX, decltype(&BN_CTX_free)> bn_ctx(BN_CTX_new(), &BN_CTX_free);
  if (!bn_d || !bn_p || !bn_q || !dmp1 || !dmq1 || !p1 || !q1 || !bn_ctx) return nullptr;
  if (!BN_sub(p1.get(), bn_p.get(), BN_value_one()) || !BN_sub(q1.get(), bn_q.get(), BN_value_one()) ||
      !BN_mod(dmp1.get(), bn_d.get(), p1.get(), bn_ctx.get()) ||
      !BN_mod(dmq1.get(), bn_d.get(), q1.get(), bn_ctx.get()))
    return nullptr;
  Bignum bn_n = bignum(*n), bn_e = bignum(*e), bn_iqmp = bignum(*iqmp);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(),
                                                                      &OSSL_PARAM_BLD_free);
  if (!bld || !bn_n || !bn_e || !bn_iqmp ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_D, bn_d.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_FACTOR1, bn_p.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_FACTOR2, bn_q.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_EXPONENT1, dmp1.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_EXPONENT2, dmq1.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_COEFFICIENT1, bn_iqmp.get()))
    return nullptr;
  return key_from_params("RSA", bld.get());
}

// ECDSA from the OpenSSH private section (curve name, public point, scalar).
EVP_PKEY* ecdsa_key(wire::Reader& r) {
  const auto name = r.string(), point = r.string(), scalar = r.string();
  const Curve* curve = name ? curve_by_ssh_name(*name) : nullptr;
  if (!scalar || !curve) return nullptr;
  Bignum priv = bignum(*scalar);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(),
                                                                      &OSSL_PARAM_BLD_free);
  if (!bld || !priv ||
      !OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->openssl_group, 0) ||
      !OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point->data(), point->size()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv.get()))
    return nullptr;
  return key_from_params("EC", bld.get());
}

// The public key blob of a decoded key, as a .pub file holds it; nullopt for a
// type tpush does not sign with.
std::optional<std::string> public_blob_of(EVP_PKEY* key) {
  std::string blob;
  if (EVP_PKEY_is_a(key, "ED25519")) {
    unsigned char pub[32];
    std::size_t len = sizeof pub;
    if (EVP_PKEY_get_raw_public_key(key, pub, &len) != 1) return std::nullopt;
    wire::put_string(blob, "ssh-ed25519");
    wire::put_string(blob, std::string_view(reinterpret_cast<const char*>(pub), len));
    return blob;
  }
  if (EVP_PKEY_is_a(key, "RSA")) {
    BIGNUM *n = nullptr, *e = nullptr;
    const bool ok = EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) == 1 &&
                    EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e) == 1;
    if (ok) {
      wire::put_string(blob, "ssh-rsa");
      wire::put_mpint(blob, bignum_bytes(e));
      wire::put_mpint(blob, bignum_bytes(n));
    }
    BN_free(n);
    BN_free(e);
    if (!ok) return std::nullopt;
    return blob;
  }
  if (EVP_PKEY_is_a(key, "EC")) {
    char group[64];
    unsigned char point[160];
    std::size_t group_len = 0, point_len = 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &group_len) != 1 ||
        EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &point_len) != 1)
      return std::nullopt;
    const Curve* curve = nullptr;
    for (const auto& c : kCurves)
      if (std::string_view(group, group_len) == c.openssl_group) curve = &c;
    if (!curve) return std::nullopt;
    wire::put_string(blob, "ecdsa-sha2-" + std::string(curve->ssh_name));
    wire::put_string(blob, curve->ssh_name);
    wire::put_string(blob, std::string_view(reinterpret_cast<const char*>(point), point_len));
    return blob;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> openssh_key_contents(std::string_view text) {
  constexpr std::string_view begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  const auto b = text.find(begin);
  if (b == std::string_view::npos) return std::nullopt;
  const auto e = text.find("-----END", b + begin.size());  // npos: to the end
  std::string body;
  for (char c : text.substr(b + begin.size(), e == std::string_view::npos ? e : e - b - begin.size()))
    if (!std::isspace(static_cast<unsigned char>(c))) body += c;
  auto blob = util::base64_decode(body);
  constexpr std::string_view magic("openssh-key-v1\0", 15);
  if (!blob || blob->compare(0, magic.size(), magic) != 0) return std::nullopt;
  return blob->substr(magic.size());
}

SigningKey::SigningKey(EVP_PKEY* key, Type type, std::string public_blob)
    : key_(key, &EVP_PKEY_free), type_(type), public_blob_(std::move(public_blob)) {}

std::optional<SigningKey> SigningKey::parse(std::string_view text, const std::string& passphrase) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(nullptr, &EVP_PKEY_free);
  std::optional<std::string> header_blob;  // an OpenSSH-format file's public key
  if (const auto contents = openssh_key_contents(text)) {
    // cipher, kdf, kdf options, key count, public key, private section:
    // check, check, type, key fields, comment, padding.
    wire::Reader r(*contents);
    const auto cipher = r.string();
    r.string();  // kdf name
    r.string();  // kdf options
    const auto count = r.u32();
    const auto public_blob = r.string(), private_section = r.string();
    if (!private_section || cipher != "none" || count != 1u) return std::nullopt;
    header_blob = std::string(*public_blob);
    wire::Reader p(*private_section);
    const auto check1 = p.u32(), check2 = p.u32();
    const auto type = p.string();
    if (!type || check1 != check2) return std::nullopt;
    if (*type == "ssh-ed25519") {
      p.string();  // the public key again
      const auto seed_and_pub = p.string();
      if (!seed_and_pub || seed_and_pub->size() != 64) return std::nullopt;
      key.reset(EVP_PKEY_new_raw_private_key(
          EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(seed_and_pub->data()), 32));
    } else if (*type == "ssh-rsa") {
      key.reset(rsa_key(p));
    } else if (type->substr(0, 11) == "ecdsa-sha2-") {
      key.reset(ecdsa_key(p));
    }
  } else {
    if (text.find("-----BEGIN ") == std::string_view::npos) return std::nullopt;
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())),
                                                 &BIO_free);
    // Always a callback: without one OpenSSL would prompt on the terminal itself.
    auto give_passphrase = [](char* buf, int size, int, void* user) -> int {
      const auto* pass = static_cast<const std::string*>(user);
      if (pass->empty() || static_cast<int>(pass->size()) > size) return 0;
      std::memcpy(buf, pass->data(), pass->size());
      return static_cast<int>(pass->size());
    };
    if (bio)
      key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, give_passphrase, const_cast<std::string*>(&passphrase)));
    ERR_clear_error();
  }
  if (!key) return std::nullopt;

  const std::optional<std::string> blob = public_blob_of(key.get());
  if (!blob) return std::nullopt;
  // An OpenSSH file's public key must be its private key's own, as OpenSSH checks:
  // a file whose halves disagree would offer one key and sign with another.
  if (header_blob && *header_blob != *blob) return std::nullopt;
  const std::string type = wire::blob_type(*blob);
  const Type kind = type == "ssh-ed25519" ? Type::ed25519 : type == "ssh-rsa" ? Type::rsa : Type::ecdsa;
  return SigningKey(key.release(), kind, *blob);
}

std::optional<std::string> SigningKey::sign_userauth_request(std::string_view data) const {
  // string session id, byte SSH_MSG_USERAUTH_REQUEST, string user, string
  // service, string "publickey", boolean TRUE, string algorithm, string key.
  wire::Reader r(data);
  r.string();
  r.byte();
  r.string();
  r.string();
  r.string();
  r.byte();
  const auto algorithm = r.string();
  if (!algorithm) return std::nullopt;
  // A certificate's login ("ssh-ed25519-cert-v01@openssh.com") is signed as its key's.
  return sign(plain_signature_algorithm(*algorithm), data);
}

std::optional<std::string> SigningKey::sign(std::string_view algorithm, std::string_view data) const {
  const EVP_MD* md = nullptr;
  switch (type_) {
    case Type::ed25519:
      if (algorithm != "ssh-ed25519") return std::nullopt;
      break;
    case Type::rsa:
      if (algorithm == "rsa-sha2-512")
        md = EVP_sha512();
      else if (algorithm == "rsa-sha2-256")
        md = EVP_sha256();
      else if (algorithm == "ssh-rsa")
        md = EVP_sha1();
      else
        return std::nullopt;
      break;
    case Type::ecdsa: {
      const Curve* curve = algorithm.substr(0, 11) == "ecdsa-sha2-" ? curve_by_ssh_name(algorithm.substr(11))
                                                                    : nullptr;
      if (!curve) return std::nullopt;
      md = curve->digest();
      break;
    }
  }

  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, in, data.size()) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  std::string signature(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &len, in, data.size()) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  signature.resize(len);
  if (type_ != Type::ecdsa) return signature;

  // OpenSSL gives DER; SSH wants mpint r, mpint s.
  const auto* der = reinterpret_cast<const unsigned char*>(signature.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
      d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size())), &ECDSA_SIG_free);
  if (!sig) return std::nullopt;
  const BIGNUM *sig_r = nullptr, *sig_s = nullptr;
  ECDSA_SIG_get0(sig.get(), &sig_r, &sig_s);
  std::string out;
  wire::put_mpint(out, bignum_bytes(sig_r));
  wire::put_mpint(out, bignum_bytes(sig_s));
  return out;
}

}  // namespace tpush::ssh
