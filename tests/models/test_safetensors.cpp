// safetensors: round trips, the byte layout, and every malformed file as a clear error.
#include <doctest/doctest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "models/safetensors.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using namespace lenlab;
using namespace lenlab::test;

namespace {

// A safetensors file from a header text and a data section, for malformed-file tests.
std::string raw_safetensors(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

SafeTensors example() {
  SafeTensors st;
  const float nan_payload = std::bit_cast<float>(0x7fc12345u);
  st.tensors.push_back({"z.weight", {2, 3}, {1.5f, -0.0f, 1e-40f, nan_payload, 3.0e38f, -7.25f}});
  st.tensors.push_back({"a.bias", {3}, {std::numeric_limits<float>::infinity(), 0.1f, -2.0f}});
  st.tensors.push_back({"scalar", {}, {42.0f}});
  st.tensors.push_back({"empty", {0, 4}, {}});
  st.tensors.push_back({"ünïcode", {1, 1, 2}, {1.0f, 2.0f}});
  st.metadata = {{"format", "pt"}, {"lenlab.config", R"({"d_model": 64})"}};
  return st;
}

}  // namespace

TEST_CASE("safetensors round trip keeps names, order, shapes, bit-exact values and metadata") {
  TempDir dir;
  const fs::path p = dir.path / "model.safetensors";
  const SafeTensors st = example();
  save_safetensors(p, st);
  const SafeTensors back = load_safetensors(p);
  CHECK(back.metadata == st.metadata);
  REQUIRE(back.tensors.size() == st.tensors.size());
  for (size_t i = 0; i < st.tensors.size(); ++i) {
    CAPTURE(st.tensors[i].name);
    CHECK(back.tensors[i].name == st.tensors[i].name);
    CHECK(back.tensors[i].shape == st.tensors[i].shape);
    REQUIRE(back.tensors[i].data.size() == st.tensors[i].data.size());
    for (size_t j = 0; j < st.tensors[i].data.size(); ++j) {
      CHECK(std::bit_cast<uint32_t>(static_cast<float>(back.tensors[i].data[j])) ==
            std::bit_cast<uint32_t>(static_cast<float>(st.tensors[i].data[j])));
    }
  }
  CHECK(back.at("a.bias").shape == std::vector<int64_t>{3});
  CHECK(dir.names() == std::vector<std::string>{"model.safetensors"});

  // Saving again replaces the file.
  SafeTensors small;
  small.tensors.push_back({"only", {1}, {9.0f}});
  save_safetensors(p, small);
  const SafeTensors back2 = load_safetensors(p);
  REQUIRE(back2.tensors.size() == 1);
  CHECK(back2.tensors[0].data[0] == 9.0f);
  CHECK(back2.metadata.empty());
}

TEST_CASE("F64 tensors keep every double bit for bit, F32 ones are rounded to float") {
  TempDir dir;
  const fs::path p = dir.path / "double.safetensors";
  SafeTensors st;
  const double third = 1.0 / 3.0, tiny = 4.9e-324;
  st.tensors.push_back({"d", {2, 2}, {third, -0.0, tiny, 1e300}, "F64"});
  st.tensors.push_back({"f", {1}, {third}, "F32"});
  save_safetensors(p, st);
  const SafeTensors back = load_safetensors(p);
  CHECK(back.at("d").dtype == "F64");
  CHECK(back.at("f").dtype == "F32");
  for (size_t j = 0; j < 4; ++j)
    CHECK(std::bit_cast<uint64_t>(back.at("d").data[j]) ==
          std::bit_cast<uint64_t>(st.tensors[0].data[j]));
  CHECK(back.at("f").data[0] == static_cast<double>(static_cast<float>(third)));
  // 16 bytes per two F64 values: the header says so.
  const std::string bytes = read_text(p);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(bytes.size() == 8 + n + 4 * 8 + 4);
  CHECK(contains(bytes.substr(8, n), R"("d":{"dtype":"F64","shape":[2,2],"data_offsets":[0,32]})"));

  st.tensors = {{"w", {1}, {1}, "F16"}};
  const std::string msg = usage_message([&] { save_safetensors(p, st); });
  CHECK(contains(msg, "'F16'"));
  CHECK(contains(msg, "'F32' or 'F64'"));
}

TEST_CASE("safetensors byte layout matches the specification for a hand-checked example") {
  TempDir dir;
  const fs::path p = dir.path / "tiny.safetensors";
  SafeTensors st;
  st.tensors.push_back({"a", {2}, {1.0f, -2.0f}});
  save_safetensors(p, st);
  const std::string bytes = read_text(p);
  // 54 bytes of JSON + 2 spaces of padding = 56 = 0x38; then 2 floats.
  const std::string expected_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"
                                      "  ";
  REQUIRE(bytes.size() == 8 + 56 + 8);
  CHECK(bytes.substr(0, 8) == std::string("\x38\0\0\0\0\0\0\0", 8));
  CHECK(bytes.substr(8, 56) == expected_header);
  CHECK(bytes.substr(64) == std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
  CHECK(nlohmann::json::parse(bytes.substr(8, 56))["a"]["data_offsets"][1] == 8);

  // Header length is a multiple of 8 whatever the names' lengths.
  for (int len = 1; len <= 9; ++len) {
    SafeTensors s;
    s.tensors.push_back({std::string(len, 'n'), {1}, {1.0f}});
    s.metadata["k"] = std::string(len, 'v');
    save_safetensors(p, s);
    const std::string b = read_text(p);
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    CHECK(n % 8 == 0);
    CHECK(b.size() == 8 + n + 4);
    CHECK_FALSE(nlohmann::json::parse(b.substr(8, n)).is_discarded());
  }
}

TEST_CASE("save_safetensors rejects inconsistent tensors") {
  TempDir dir;
  const fs::path p = dir.path / "bad.safetensors";
  SafeTensors st;
  st.tensors.push_back({"w", {2, 3}, {1, 2, 3, 4, 5}});
  const std::string msg = usage_message([&] { save_safetensors(p, st); });
  CHECK(contains(msg, "'w'"));
  CHECK(contains(msg, "[2, 3]"));
  CHECK(contains(msg, "5 values"));

  st.tensors = {{"w", {1}, {1}}, {"w", {1}, {2}}};
  CHECK(contains(usage_message([&] { save_safetensors(p, st); }), "duplicate"));
  st.tensors = {{"__metadata__", {1}, {1}}};
  CHECK(usage_message([&] { save_safetensors(p, st); }) != "<no UsageError>");
  st.tensors = {{"w", {-1}, {}}};
  CHECK(contains(usage_message([&] { save_safetensors(p, st); }), "negative"));
  CHECK(dir.names().empty());
}

TEST_CASE("SafeTensors::at names the missing tensor and lists the present ones") {
  SafeTensors st;
  CHECK(contains(usage_message([&] { st.at("w"); }), "'w'"));
  st.tensors = {{"a", {1}, {1}}, {"b", {1}, {2}}};
  const std::string msg = usage_message([&] { st.at("c"); });
  CHECK(contains(msg, "'c'"));
  CHECK(contains(msg, "'a' or 'b'"));
}

TEST_CASE("load_safetensors turns every malformation into a UsageError naming the file") {
  TempDir dir;
  const fs::path p = dir.path / "m.safetensors";
  auto load_error = [&](const std::string& bytes) {
    write_raw(p, bytes);
    const std::string msg = usage_message([&] { load_safetensors(p); });
    CHECK(contains(msg, p.string()));
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  };
  const std::string f4(4, '\0');
  const std::string good = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  write_raw(p, raw_safetensors(good, f4));
  CHECK(load_safetensors(p).tensors.size() == 1);

  CHECK(contains(load_error(""), "shorter than"));
  CHECK(contains(load_error("abc"), "shorter than"));
  CHECK(contains(load_error(raw_safetensors(good, f4).substr(0, 30)), "past the end"));
  CHECK(contains(load_error(raw_safetensors(good, "")), "outside"));
  CHECK(contains(load_error(raw_safetensors("{\"w\": ", "")), "not valid JSON"));
  CHECK(contains(load_error(raw_safetensors("[1, 2]", "")), "not a JSON object"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", f4)),
      "dtype F16"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0,4]}})", f4)),
      "4 bytes of data"));
  CHECK(contains(load_error(raw_safetensors(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", f4)),
                 "no dtype"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", f4)),
      "shape"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", f4)),
      "4 bytes of data"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", f4)),
      "outside"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", f4)),
      "data_offsets"));
  CHECK(
      contains(load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],)"
                                          R"("data_offsets":[0,4]}})",
                                          f4)),
               "shape"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                 f4)),
      "overlaps"));
  CHECK(contains(load_error(raw_safetensors(
                     R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f4 + f4)),
                 "gap"));
  CHECK(contains(load_error(raw_safetensors(good, f4 + f4)), "4 bytes after the last tensor"));
  CHECK(contains(load_error(raw_safetensors(R"({"__metadata__":{"k":1}})", "")), "not a string"));
  CHECK(contains(usage_message([&] { load_safetensors(dir.path / "absent.safetensors"); }),
                 "cannot read"));
}

TEST_CASE("load_safetensors never crashes on truncated or corrupted bytes") {
  TempDir dir;
  const fs::path p = dir.path / "m.safetensors";
  save_safetensors(p, example());
  const std::string bytes = read_text(p);
  // Every proper prefix is invalid (the data section no longer fits the offsets).
  for (size_t n = 0; n < bytes.size(); ++n) {
    write_raw(p, bytes.substr(0, n));
    CHECK_THROWS_AS(load_safetensors(p), UsageError);
  }
  // Flipping header bytes must either still load or give a UsageError; ASan catches bad reads.
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  int rejected = 0;
  for (size_t i = 0; i < 8 + header_len; ++i) {
    for (unsigned char c : {'\0', '9', '"', '}', '\xff'}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(c);
      write_raw(p, corrupt);
      try {
        load_safetensors(p);
      } catch (const UsageError&) {
        ++rejected;
      }
    }
  }
  CHECK(rejected > 0);
}
