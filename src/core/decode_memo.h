// DecodeMemo: a pure decoder's results kept by the exact text they came from, so a text
// read again is not parsed again. A node's registration and its agent's inventory are
// stored JSON that every scheduling cycle, heartbeat and metrics refresh reads, and that
// change only when the node joins or is registered again: at 1,250 nodes, decoding them
// on every read was a tenth of corrald's time (docs/performance.md, issue 41).
//
// The key is the whole text, compared byte for byte, so a hit is exactly what decoding
// would give. Errors are not kept (the caller reports each read of a bad row). At
// `capacity` texts it forgets them all and fills again: a bound on memory that costs one
// decode per text when it happens, rather than bookkeeping on every hit.
//
// Thread safety: get() is safe to call concurrently; a decode runs outside the lock.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/result.h"

namespace corral::core {

template <typename T>
class DecodeMemo {
 public:
  explicit DecodeMemo(std::size_t capacity) : capacity_(capacity) {}

  // decode(text), or a copy of what an earlier call decoded from the same text.
  template <typename Decode>
  Result<T> get(std::string_view text, const Decode& decode) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      const auto it = entries_.find(text);
      if (it != entries_.end()) return it->second;
    }
    Result<T> value = decode(text);
    if (!value.ok()) return value;
    const std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= capacity_) entries_.clear();
    entries_.emplace(std::string(text), *value);
    return value;
  }

  std::size_t size() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  mutable std::mutex mu_;
  std::unordered_map<std::string, T, Hash, std::equal_to<>> entries_;
  const std::size_t capacity_;
};

}  // namespace corral::core
