// common/sha256.h and common/base64.h against the published test vectors (FIPS 180-2, RFC 4648).
#include <gtest/gtest.h>

#include <string>

#include "common/base64.h"
#include "common/sha256.h"

namespace opcheck {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, DigestIsTheBytesTheHexSpells) {
  Sha256 a;
  a.update("abc");
  const std::string bytes = a.digest();
  ASSERT_EQ(bytes.size(), 32u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0xbau);
  EXPECT_EQ(static_cast<unsigned char>(bytes[31]), 0xadu);
  Sha256 b;
  b.update("abc");
  EXPECT_EQ(b.hex_digest(), sha256_hex("abc"));
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, HighBytesAndTheLastTwoLetters) {
  EXPECT_EQ(base64_encode(std::string("\xff\xfe\xfd", 3)), "//79");
  EXPECT_EQ(base64_encode(std::string("\xfb\xff", 2)), "+/8=");
  EXPECT_EQ(base64_encode(std::string(1, '\0')), "AA==");
}

TEST(Base64, TheCspSourceOfAScript) {
  // What a Content-Security-Policy hash source holds: base64 of the raw SHA-256 digest.
  Sha256 h;
  h.update("abc");
  EXPECT_EQ(base64_encode(h.digest()), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
}

}  // namespace
}  // namespace opcheck
