// OpenSSL's libcrypto (Debian's libssl-dev, Homebrew's openssl) for BLESecurity:
// AES-128 (EVP cipher), AES-CCM, CMAC (EVP_MAC), P-256 ECDH (EVP_PKEY), SHA-256 (EVP_MD).
#include <openssl/evp.h>
#include <openssl/aes.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/param_build.h>
#include <openssl/err.h>
#include <openssl/sha.h>
