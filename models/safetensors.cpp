#include "models/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/regular_file.hpp"

namespace lenlab {

// The format is little-endian; the tensor bytes are copied as they are in memory.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");
static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);
static_assert(sizeof(double) == 8 && std::numeric_limits<double>::is_iec559);

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kMetadataKey = "__metadata__";

// Bytes per element of the dtypes lenlab reads and writes; 0 for any other.
uint64_t dtype_bytes(const std::string& dtype) {
  return dtype == "F32" ? sizeof(float) : dtype == "F64" ? sizeof(double) : 0;
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

// Product of the (non-negative) dimensions, or `limit + 1` once it exceeds `limit`, so a hostile
// header cannot overflow the arithmetic.
uint64_t element_count(const std::vector<int64_t>& shape, uint64_t limit) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  uint64_t n = 1;
  for (int64_t d : shape) {
    const auto ud = static_cast<uint64_t>(d);
    if (ud != 0 && n > limit / ud) return limit + 1;
    n *= ud;
  }
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

const NamedTensor& SafeTensors::at(const std::string& name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return t;
  }
  if (tensors.empty()) throw UsageError("no tensor named '" + name + "': the checkpoint is empty");
  std::vector<std::string> names;
  for (const auto& t : tensors) names.push_back(t.name);
  throw UsageError("no tensor named '" + name + "'; the checkpoint has " + join_choices(names));
}

void save_safetensors(const std::filesystem::path& path, const SafeTensors& st) {
  const std::string where = "cannot save " + path.string() + ": ";
  ordered_json header = ordered_json::object();
  if (!st.metadata.empty()) header[kMetadataKey] = st.metadata;

  uint64_t offset = 0;
  std::set<std::string> seen;
  for (const auto& t : st.tensors) {
    if (t.name.empty() || t.name == kMetadataKey) {
      throw UsageError(where + "invalid tensor name " + quoted(t.name));
    }
    if (!seen.insert(t.name).second) throw UsageError(where + "duplicate tensor " + quoted(t.name));
    for (int64_t d : t.shape) {
      if (d < 0) {
        throw UsageError(where + "tensor " + quoted(t.name) + " has negative dimension in shape " +
                         shape_text(t.shape));
      }
    }
    if (dtype_bytes(t.dtype) == 0)
      throw UsageError(where + "tensor " + quoted(t.name) + " has dtype " + quoted(t.dtype) +
                       "; lenlab writes " + join_choices({"F32", "F64"}));
    if (element_count(t.shape, t.data.size()) != t.data.size()) {
      throw UsageError(where + "tensor " + quoted(t.name) + " has shape " + shape_text(t.shape) +
                       " but " + std::to_string(t.data.size()) + " values");
    }
    const uint64_t bytes = t.data.size() * dtype_bytes(t.dtype);
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }

  std::string json_text;
  try {
    json_text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    // dump() rejects invalid UTF-8 in names or metadata.
    throw UsageError(where + "tensor names and metadata must be valid UTF-8");
  }
  // Padding keeps the tensor bytes 8-aligned in the file, as the reference implementation does.
  json_text.append((8 - json_text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + json_text.size() + offset);
  const uint64_t n = json_text.size();
  char len[8];
  std::memcpy(len, &n, 8);
  out.append(len, 8);
  out += json_text;
  for (const auto& t : st.tensors) {
    if (t.dtype == "F64") {
      out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(double));
      continue;
    }
    const std::vector<float> rounded(t.data.begin(), t.data.end());
    out.append(reinterpret_cast<const char*>(rounded.data()), rounded.size() * sizeof(float));
  }
  write_file_atomic(path, out);
}

SafeTensors load_safetensors(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  auto bad = [&](const std::string& problem) -> UsageError {
    return UsageError(where + "not a valid safetensors file: " + problem);
  };

  // A regular file of bounded size only: a named pipe or a device is refused, never read.
  const std::string file = read_regular_file(path, kLargeFileLimit, "checkpoint");

  if (file.size() < 8) {
    throw bad("only " + std::to_string(file.size()) +
              " bytes, shorter than the 8-byte header size");
  }
  uint64_t header_len = 0;
  std::memcpy(&header_len, file.data(), 8);
  if (header_len > file.size() - 8) {
    throw bad("header length " + std::to_string(header_len) + " runs past the end of the file (" +
              std::to_string(file.size()) + " bytes)");
  }
  const char* header_begin = file.data() + 8;
  ordered_json header;
  try {
    header = parse_json_input(std::string_view(header_begin, header_len), "the header");
  } catch (const UsageError& e) {  // not JSON, or nested past any safetensors header
    throw bad(e.what());
  }
  if (!header.is_object()) throw bad("the header is not a JSON object");

  const uint64_t buffer_size = file.size() - 8 - header_len;
  const char* buffer = header_begin + header_len;

  SafeTensors st;
  struct Span {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      if (!entry.is_object()) throw bad("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string())
          throw bad("__metadata__ value for " + quoted(key) + " is not a string");
        st.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor " + quoted(name) + " ";
    if (!entry.is_object()) throw bad(what + "is not described by a JSON object");
    const auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) throw bad(what + "has no dtype");
    const uint64_t element_bytes = dtype_bytes(dtype->get<std::string>());
    if (element_bytes == 0) {
      throw bad(what + "has dtype " + dtype->get<std::string>() + "; lenlab reads F32 and F64");
    }
    const auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) throw bad(what + "has no shape array");
    NamedTensor t;
    t.name = name;
    t.dtype = dtype->get<std::string>();
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw bad(what + "has a shape entry that is not a non-negative integer");
      }
      t.shape.push_back(d.get<int64_t>());
    }
    const auto offsets = entry.find("data_offsets");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      throw bad(what + "has no data_offsets pair of non-negative integers");
    }
    const auto begin = (*offsets)[0].get<uint64_t>();
    const auto end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > buffer_size) {
      throw bad(what + "has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                "] outside the " + std::to_string(buffer_size) + "-byte data section");
    }
    const uint64_t count = element_count(t.shape, buffer_size / element_bytes);
    if (count * element_bytes != end - begin) {
      throw bad(what + "has shape " + shape_text(t.shape) + " but " + std::to_string(end - begin) +
                " bytes of data");
    }
    spans.push_back({begin, end, st.tensors.size()});
    st.tensors.push_back(std::move(t));
  }

  // Like the reference reader: the tensors must tile the data section exactly, which rules out
  // overlaps (two tensors aliasing the same bytes) and gaps or trailing garbage.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const auto& s : spans) {
    const std::string& name = st.tensors[s.index].name;
    if (s.begin < expected) throw bad("tensor " + quoted(name) + " overlaps the tensor before it");
    if (s.begin > expected) throw bad("gap in the data section before tensor " + quoted(name));
    expected = s.end;
  }
  if (expected != buffer_size) {
    throw bad(std::to_string(buffer_size - expected) + " bytes after the last tensor");
  }

  // Return tensors in file order, which is the order save_safetensors was given.
  std::vector<NamedTensor> ordered;
  ordered.reserve(spans.size());
  for (const auto& s : spans) {
    NamedTensor& t = st.tensors[s.index];
    const size_t bytes = s.end - s.begin;
    if (t.dtype == "F64") {
      t.data.resize(bytes / sizeof(double));
      if (bytes > 0) std::memcpy(t.data.data(), buffer + s.begin, bytes);
    } else {
      std::vector<float> values(bytes / sizeof(float));
      if (bytes > 0) std::memcpy(values.data(), buffer + s.begin, bytes);
      t.data.assign(values.begin(), values.end());
    }
    ordered.push_back(std::move(t));
  }
  st.tensors = std::move(ordered);
  return st;
}

}  // namespace lenlab
