#include "tpush/ssh/identity/signature_check.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <memory>
#include <string>

#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Params = std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)>;
using PublicNumber = std::unique_ptr<BIGNUM, decltype(&BN_free)>;

PublicNumber public_number(std::string_view magnitude) {
  return {BN_bin2bn(reinterpret_cast<const unsigned char*>(magnitude.data()), static_cast<int>(magnitude.size()),
                    nullptr),
          &BN_free};
}

Key public_key(const char* algorithm, OSSL_PARAM_BLD* bld) {
  EVP_PKEY* key = nullptr;
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, algorithm, nullptr);
  if (params && ctx && EVP_PKEY_fromdata_init(ctx) == 1) EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  return {key, &EVP_PKEY_free};
}

bool verify(EVP_PKEY* key, const EVP_MD* md, std::string_view signature, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                                   signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                                   data.size()) == 1;
  ERR_clear_error();
  return ok;
}

bool ed25519_valid(wire::Reader& key, std::string_view signature, std::string_view data) {
  const auto pk = key.string();
  if (!pk || pk->size() != 32 || !key.rest().empty() || signature.size() != 64) return false;
  Key k(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(pk->data()),
                                    pk->size()),
        &EVP_PKEY_free);
  return k && verify(k.get(), nullptr, signature, data);
}

bool rsa_valid(wire::Reader& key, std::string_view algorithm, std::string_view signature, std::string_view data) {
  const EVP_MD* md = algorithm == "rsa-sha2-512" ? EVP_sha512() : algorithm == "rsa-sha2-256" ? EVP_sha256() : nullptr;
  const auto e = key.string(), n = key.string();
  if (!md || !n || !key.rest().empty()) return false;
  PublicNumber bn_e = public_number(*e), bn_n = public_number(*n);
  Params bld(OSSL_PARAM_BLD_new(), &OSSL_PARAM_BLD_free);
  if (!bn_e || !bn_n || !bld || !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()))
    return false;
  Key k = public_key("RSA", bld.get());
  if (!k) return false;
  // OpenSSH may send a signature shorter than the modulus: pad it, as it does.
  const std::size_t modulus = static_cast<std::size_t>(EVP_PKEY_get_size(k.get()));
  if (signature.size() > modulus) return false;
  const std::string padded = std::string(modulus - signature.size(), '\0') + std::string(signature);
  return verify(k.get(), md, padded, data);
}

bool ecdsa_valid(wire::Reader& key, std::string_view type, std::string_view signature, std::string_view data) {
  struct Curve {
    std::string_view name;
    const char* group;
    const EVP_MD* (*md)();
  };
  static constexpr Curve curves[] = {{"nistp256", "prime256v1", &EVP_sha256},
                                     {"nistp384", "secp384r1", &EVP_sha384},
                                     {"nistp521", "secp521r1", &EVP_sha512}};
  const auto curve_name = key.string(), point = key.string();
  if (!point || !key.rest().empty() || type != "ecdsa-sha2-" + std::string(*curve_name)) return false;
  const Curve* curve = nullptr;
  for (const Curve& c : curves)
    if (c.name == *curve_name) curve = &c;
  if (!curve) return false;
  Params bld(OSSL_PARAM_BLD_new(), &OSSL_PARAM_BLD_free);
  if (!bld || !OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->group, 0) ||
      !OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point->data(), point->size()))
    return false;
  Key k = public_key("EC", bld.get());
  // The signature is mpint r, mpint s; OpenSSL checks DER.
  wire::Reader sig(signature);
  const auto r = sig.string(), s = sig.string();
  if (!k || !s || !sig.rest().empty()) return false;
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> ecdsa(ECDSA_SIG_new(), &ECDSA_SIG_free);
  BIGNUM* bn_r = BN_bin2bn(reinterpret_cast<const unsigned char*>(r->data()), static_cast<int>(r->size()), nullptr);
  BIGNUM* bn_s = BN_bin2bn(reinterpret_cast<const unsigned char*>(s->data()), static_cast<int>(s->size()), nullptr);
  if (!ecdsa || !bn_r || !bn_s || ECDSA_SIG_set0(ecdsa.get(), bn_r, bn_s) != 1) {
    BN_free(bn_r);
    BN_free(bn_s);
    return false;
  }
  unsigned char* der = nullptr;
  const int der_len = i2d_ECDSA_SIG(ecdsa.get(), &der);
  if (der_len <= 0) return false;
  const bool ok = verify(k.get(), curve->md(), {reinterpret_cast<const char*>(der), std::size_t(der_len)}, data);
  OPENSSL_free(der);
  return ok;
}

}  // namespace

bool signature_valid(std::string_view key_blob, std::string_view signature, std::string_view data) {
  wire::Reader key(key_blob), sig(signature);
  const auto type = key.string();
  const auto algorithm = sig.string(), bytes = sig.string();
  if (!type || !bytes || !sig.rest().empty()) return false;
  if (*type == "ssh-ed25519") return *algorithm == "ssh-ed25519" && ed25519_valid(key, *bytes, data);
  if (*type == "ssh-rsa") return rsa_valid(key, *algorithm, *bytes, data);
  if (type->substr(0, 11) == "ecdsa-sha2-") return *algorithm == *type && ecdsa_valid(key, *type, *bytes, data);
  return false;
}

}  // namespace tpush::ssh
