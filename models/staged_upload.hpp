#pragma once
// Many small host arrays sent to a backend's memory in one copy (a packed batch, a decoding step's
// rows: models/packed_batch.hpp, models/decode_cache.hpp): each array gets a 64-byte-aligned place
// in one byte buffer, and its pointer is bound there after the copy. On a GPU every copy from
// pageable host memory is a call that waits for the stream's earlier work; a packed batch was 13 to
// 21 of them a training step, a decoded token 7, and each is now one.
#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

namespace lenlab {

// One array inside a staged buffer, as the operations read it: [n] of U in the backend's memory,
// null when the last upload did not hold it.
template <class U>
struct DevicePart {
  U* ptr = nullptr;
  U* data() const { return ptr; }
};

template <class B>
class StagedUpload {
 public:
  static constexpr size_t kAlign = 64;  // every part starts on a cache line (and any type's size)

  // host's elements become `part` at the next upload().
  template <class U>
  void add(DevicePart<U>& part, const std::vector<U>& host) {
    const size_t at = (bytes_.size() + kAlign - 1) / kAlign * kAlign, n = host.size() * sizeof(U);
    bytes_.resize(at + n);
    if (n) std::memcpy(bytes_.data() + at, host.data(), n);
    bind_.push_back([&part, at](std::byte* base) {
      part.ptr = base ? reinterpret_cast<U*>(base + at) : nullptr;
    });
  }
  // `part` holds nothing after the next upload().
  template <class U>
  void skip(DevicePart<U>& part) {
    bind_.push_back([&part](std::byte*) { part.ptr = nullptr; });
  }
  // One copy of every part added into storage (grown when needed), then every part bound.
  void upload(typename B::template Buffer<std::byte>& storage) {
    B::upload(storage, bytes_.data(), bytes_.size());
    std::byte* base = bytes_.empty() ? nullptr : storage.data();
    for (const auto& bind : bind_) bind(base);
    bytes_.clear();
    bind_.clear();
  }

 private:
  std::vector<std::byte> bytes_;
  std::vector<std::function<void(std::byte*)>> bind_;
};

}  // namespace lenlab
