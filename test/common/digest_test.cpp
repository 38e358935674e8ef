// common/sha256.h, common/xxh64.h and common/base64.h against the published test vectors (FIPS 180-2, xxHash's
// reference implementation, RFC 4648).
#include <gtest/gtest.h>

#include <string>

#include "common/base64.h"
#include "common/sha256.h"
#include "common/xxh64.h"

namespace opcheck {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// Values of the reference implementation (libxxhash 0.8's XXH64, seed 0), on lengths that take every branch: no
// 32-byte stripe, stripes, and tails of 8-byte words, a 4-byte word and single bytes.
TEST(Xxh64, MatchesTheReferenceImplementation) {
  EXPECT_EQ(xxh64_hex("", 0), "ef46db3751d8e999");
  EXPECT_EQ(xxh64_hex("abc", 3), "44bc2cf5ad770999");
  std::string bytes(100000, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(((i * 2654435761u) & 0xffffffffu) >> 13);
  const std::pair<std::size_t, const char*> known[] = {
      {1, "e934a84adb052768"},  {7, "e2400cdea02ee3c5"},   {8, "521fd2878ea69d17"},    {15, "4ee77ab371d06e31"},
      {31, "b74baa9042b94dee"}, {32, "4e13111ced6f735d"},  {33, "f7b9faf20b3bce63"},   {63, "35f935e6044a08ad"},
      {100, "d61ea92c5ae13676"}, {1000, "b260521730b6d8d9"}, {99999, "1aef5193a4358a04"}, {100000, "978f1c0bc722c611"}};
  for (const auto& [n, hex] : known) EXPECT_EQ(xxh64_hex(bytes.data(), n), hex) << n << " bytes";
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
