// The safetensors parser on hand-made files: a valid one, each kind of
// damage (one DataError naming it), and the F16/BF16 conversions against
// exact values, subnormals and specials included.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "autograd/base/errors.h"
#include "checkpoints/safetensors.h"

namespace {

// 8-byte little-endian length + header + data.
std::string file_of(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

checkpoints::Safetensors parse(const std::string& bytes) {
  return checkpoints::safetensors_parse(reinterpret_cast<const unsigned char*>(bytes.data()),
                                        static_cast<int64_t>(bytes.size()));
}

std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const tg::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kTwo =
    R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},)"
    R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

std::string two_data() {
  const float a[2] = {1.5f, -2.0f};
  const unsigned char b[4] = {0x00, 0x3c, 0x00, 0xc0};  // F16 1.0, -2.0
  std::string d(reinterpret_cast<const char*>(a), 8);
  d.append(reinterpret_cast<const char*>(b), 4);
  return d;
}

}  // namespace

TEST_CASE("safetensors: a valid file parses, in the header's order, with metadata") {
  const std::string bytes = file_of(kTwo + "    ", two_data());  // trailing space padding is legal
  const checkpoints::Safetensors st = parse(bytes);
  REQUIRE(st.tensors.size() == 2);
  CHECK(st.tensors[0].name == "b");
  CHECK(st.metadata.at("format") == "pt");
  const checkpoints::SafetensorsTensor* a = st.find("a");
  REQUIRE(a != nullptr);
  CHECK(a->shape == std::vector<int64_t>{2});
  float out[2];
  checkpoints::safetensors_to_float(*a, out);
  CHECK(out[0] == 1.5f);
  CHECK(out[1] == -2.0f);
  checkpoints::safetensors_to_float(*st.find("b"), out);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -2.0f);
  CHECK(st.find("c") == nullptr);
}

TEST_CASE("safetensors: damaged files are refused with a line naming the damage") {
  const std::string good = file_of(kTwo, two_data());
  CHECK_THAT(error_of(good.substr(0, 5)), Catch::Contains("too short"));
  CHECK_THAT(error_of(good.substr(0, good.size() - 1)), Catch::Contains("truncated"));
  std::string long_header = good;
  long_header[0] = static_cast<char>(0xff);  // header length past the end
  CHECK_THAT(error_of(long_header), Catch::Contains("runs past the end"));
  CHECK_THAT(error_of(good + "x"), Catch::Contains("after its last tensor"));
  CHECK_THAT(error_of(file_of("[1,2]", "")), Catch::Contains("does not start with '{'"));
  CHECK_THAT(error_of(file_of("{\"a\":", "")), Catch::Contains("malformed"));
  auto with = [&](const std::string& b_entry, const std::string& a_entry) {
    return error_of(file_of("{\"b\":" + b_entry + ",\"a\":" + a_entry + "}", two_data()));
  };
  const std::string a_ok = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  CHECK_THAT(with(R"({"dtype":"F16","shape":[2],"data_offsets":[6,10]})", a_ok), Catch::Contains("overlapping"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[1],"data_offsets":[10,12]})", a_ok), Catch::Contains("belong to no tensor"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[2],"data_offsets":[8,9999]})", a_ok), Catch::Contains("ends at byte 9999"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[3],"data_offsets":[8,12]})", a_ok), Catch::Contains("span 4 bytes"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[2],"data_offsets":[12,8]})", a_ok), Catch::Contains("end before"));
  CHECK_THAT(with(R"({"dtype":"Q4","shape":[2],"data_offsets":[8,12]})", a_ok), Catch::Contains("unknown dtype"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[-2],"data_offsets":[8,12]})", a_ok), Catch::Contains("non-negative"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[4294967296,4294967296,4294967296],"data_offsets":[8,12]})", a_ok),
             Catch::Contains("too large"));
  CHECK_THAT(with(R"({"dtype":"F16","shape":[2]})", a_ok), Catch::Contains("no \"data_offsets\""));
  CHECK_THAT(error_of(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                              two_data().substr(0, 8))),
             Catch::Contains("twice"));
  // A control character in a name cannot break the one-line message.
  const std::string bad_name = with(R"({"dtype":"F16","shape":[2],"data_offsets":[8,12]})",
                                    R"({"dtype":"I9","shape":[2],"data_offsets":[0,8]})");
  CHECK(bad_name.find('\n') == std::string::npos);
  CHECK_THAT(error_of(file_of("{\"x\\ny\":{\"dtype\":\"Q\",\"shape\":[],\"data_offsets\":[0,0]}}", "")),
             Catch::Contains("'x\\x0ay'"));
}

TEST_CASE("safetensors: only F32, F16 and BF16 convert to float") {
  const std::string bytes = file_of(R"({"i":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\1'));
  const checkpoints::Safetensors st = parse(bytes);
  CHECK_FALSE(checkpoints::safetensors_float_dtype("I32"));
  float out;
  CHECK_THROWS_AS(checkpoints::safetensors_to_float(st.tensors[0], &out), tg::DataError);
}

TEST_CASE("safetensors: F16 and BF16 decode exactly, subnormals and specials included") {
  struct Case {
    uint16_t bits;
    float value;
  };
  const Case f16[] = {{0x0000, 0.0f},          {0x8000, -0.0f},       {0x3c00, 1.0f},
                      {0x3555, 0.333251953125f}, {0x7bff, 65504.0f},   {0x0001, std::ldexp(1.0f, -24)},
                      {0x03ff, std::ldexp(1023.0f, -24)}, {0x0400, std::ldexp(1.0f, -14)},
                      {0x7c00, std::numeric_limits<float>::infinity()}, {0xfc00, -std::numeric_limits<float>::infinity()}};
  for (const Case& c : f16) {
    const char raw[2] = {static_cast<char>(c.bits & 0xff), static_cast<char>(c.bits >> 8)};
    const std::string bytes = file_of(R"({"h":{"dtype":"F16","shape":[],"data_offsets":[0,2]}})", std::string(raw, 2));
    float out = 7.0f;
    checkpoints::safetensors_to_float(parse(bytes).tensors[0], &out);
    INFO("F16 bits " << c.bits);
    CHECK(out == c.value);
    CHECK(std::signbit(out) == std::signbit(c.value));
  }
  const char nan_raw[2] = {0x01, 0x7e};
  float out = 0.0f;
  checkpoints::safetensors_to_float(
      parse(file_of(R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", std::string(nan_raw, 2))).tensors[0], &out);
  CHECK(std::isnan(out));
  // BF16 is the top half of a float32: 0x3fc0 = 1.5, 0xc2f7 = -123.5.
  const char bf[4] = {static_cast<char>(0xc0), 0x3f, static_cast<char>(0xf7), static_cast<char>(0xc2)};
  float two[2];
  checkpoints::safetensors_to_float(
      parse(file_of(R"({"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})", std::string(bf, 4))).tensors[0], two);
  CHECK(two[0] == 1.5f);
  CHECK(two[1] == -123.5f);
}
