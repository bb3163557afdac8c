// The JSON codec under the cycle file (capture.cc) and the scheduler knobs
// (knobs.h): each struct lists its fields once, in Fields<T>::visit, and that one list
// drives both the writer and the reader, so the two cannot disagree about a name or
// leave a field out on one side only.
//
// Reading follows one rule everywhere: a missing key (or null, for an optional) leaves
// the field as it was (its default, or the base config the knobs are applied over), so
// a file written before a field existed still reads; an unknown key is an error, so a
// file from a newer Corral is refused instead of replayed without what it says. The
// first problem is kept, named by its JSON path: `input.running[3].gpus[0].index`.
//
// The writer streams text (no JSON tree: a 10,000-GPU fleet is written in one pass),
// keys in visit order. Exactness: integers are int64, times and durations integer
// milliseconds, finite doubles the shortest text that reads back as the same bits
// (std::to_chars, always with a '.' or an exponent, so -0.0 stays -0.0), the others the
// strings "NaN" (which keeps that a value is NaN, not its payload), "Infinity" and
// "-Infinity".
//
// Thread safety: stateless functions and value types.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/ids.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::cycle::detail {

using Json = nlohmann::json;  // what the reader reads

// The first problem found while reading.
class ReadErrors {
 public:
  void fail(const std::string& path, std::string message);
  bool ok() const { return !first_.has_value(); }
  core::Status status() const { return first_ ? *first_ : core::ok_status(); }

 private:
  std::optional<core::Status> first_;
};

// "parent.key", or "key" at the top.
std::string child_path(std::string_view parent, std::string_view key);
// "parent[i]".
std::string index_path(std::string_view parent, std::size_t i);
// A decimal from 0 to 1000 with nothing around it ("2"), else nothing.
std::optional<std::int32_t> parse_small_int(std::string_view text);

// The inclusive bounds of an integer (or millisecond) field.
struct Range {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

// Codec<T>::write(const T&, std::string& out), appending T's JSON text, and
// Codec<T>::read(const Json&, const std::string& path, T& out, ReadErrors&).
// The primary template is for structs with a Fields<T>; the value types have their own.
template <typename T>
struct Codec;

// Fields<T>::visit(v, t) calls v(key, t.field) (or v(key, t.field, Range{lo, hi})) for
// every field, with t a T or a const T. An optional Fields<T>::check(const T&, path,
// ReadErrors&) states rules across fields, checked after a read.
template <typename T>
struct Fields;

// EnumNames<E>::kNames: every enumerator with its name in the file.
template <typename E>
struct EnumNames;

std::int64_t range_value(std::int32_t v);
std::int64_t range_value(std::int64_t v);
std::int64_t range_value(core::Duration v);

// Appends `s` as a JSON string. Bytes that are not UTF-8 become U+FFFD (ids and reasons
// come from validated JSON or YAML, so this is a last net, not a path taken).
void append_string(std::string& out, std::string_view s);

// Writes one JSON object: `{`, then "key":value per call, then `}` from finish().
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }

  template <typename T>
  void operator()(std::string_view key, const T& value) {
    if (!first_) out_ += ',';
    first_ = false;
    append_string(out_, key);
    out_ += ':';
    Codec<T>::write(value, out_);
  }
  template <typename T>
  void operator()(std::string_view key, const T& value, Range /*checked when read*/) {
    (*this)(key, value);
  }
  void finish() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

class ObjectReader {
 public:
  // REQUIRES: object.is_object(). `object` must outlive the reader.
  ObjectReader(const Json& object, std::string path, ReadErrors& errors)
      : object_(object), path_(std::move(path)), errors_(errors) {}

  template <typename T>
  void operator()(std::string_view key, T& value) {
    seen_.emplace_back(key);
    if (!errors_.ok()) return;
    const auto it = object_.find(std::string(key));
    if (it == object_.end()) return;
    Codec<T>::read(*it, child_path(path_, key), value, errors_);
  }
  template <typename T>
  void operator()(std::string_view key, T& value, Range range) {
    (*this)(key, value);
    if (errors_.ok() && object_.contains(std::string(key))) {
      check_range(child_path(path_, key), range_value(value), range);
    }
  }
  // A key that is allowed here but read by someone else.
  void skip(std::string_view key) { seen_.emplace_back(key); }
  // Fails on the first key (in key order) that no call named.
  void finish();

 private:
  void check_range(const std::string& path, std::int64_t v, Range range);

  const Json& object_;
  std::string path_;
  ReadErrors& errors_;
  std::vector<std::string> seen_;
};

// Reads a struct from a JSON object; `skip` names keys that may be present and are
// someone else's.
template <typename T>
void read_fields(const Json& j, const std::string& path, T& out, ReadErrors& errors,
                 std::span<const std::string_view> skip = {}) {
  if (!j.is_object()) return errors.fail(path, "must be an object");
  ObjectReader reader(j, path, errors);
  for (std::string_view key : skip) reader.skip(key);
  Fields<T>::visit(reader, out);
  reader.finish();
  if constexpr (requires { Fields<T>::check(out, path, errors); }) {
    if (errors.ok()) Fields<T>::check(out, path, errors);
  }
}

template <typename T>
struct Codec {
  static void write(const T& value, std::string& out) {
    ObjectWriter writer(out);
    Fields<T>::visit(writer, value);
    writer.finish();
  }
  static void read(const Json& j, const std::string& path, T& out, ReadErrors& errors) {
    read_fields(j, path, out, errors);
  }
};

#define CORRAL_CYCLE_VALUE_CODEC(T)                                                       \
  template <>                                                                             \
  struct Codec<T> {                                                                       \
    static void write(const T& value, std::string& out);                                  \
    static void read(const Json& j, const std::string& path, T& out, ReadErrors& errors); \
  }
CORRAL_CYCLE_VALUE_CODEC(bool);
CORRAL_CYCLE_VALUE_CODEC(std::int32_t);
CORRAL_CYCLE_VALUE_CODEC(std::int64_t);
CORRAL_CYCLE_VALUE_CODEC(double);
CORRAL_CYCLE_VALUE_CODEC(std::string);
CORRAL_CYCLE_VALUE_CODEC(core::Duration);  // integer milliseconds
CORRAL_CYCLE_VALUE_CODEC(core::Time);      // integer milliseconds since the epoch
#undef CORRAL_CYCLE_VALUE_CODEC

template <typename Tag, typename Rep>
struct Codec<core::Id<Tag, Rep>> {
  static void write(const core::Id<Tag, Rep>& id, std::string& out) {
    Codec<Rep>::write(id.value, out);
  }
  static void read(const Json& j, const std::string& path, core::Id<Tag, Rep>& out,
                   ReadErrors& errors) {
    Codec<Rep>::read(j, path, out.value, errors);
  }
};

template <typename T>
struct Codec<std::optional<T>> {
  static void write(const std::optional<T>& value, std::string& out) {
    if (value) {
      Codec<T>::write(*value, out);
    } else {
      out += "null";
    }
  }
  static void read(const Json& j, const std::string& path, std::optional<T>& out,
                   ReadErrors& errors) {
    if (j.is_null()) {
      out.reset();
      return;
    }
    T value{};
    Codec<T>::read(j, path, value, errors);
    out = std::move(value);
  }
};

template <typename T>
struct Codec<std::vector<T>> {
  static void write(const std::vector<T>& items, std::string& out) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ',';
      Codec<T>::write(items[i], out);
    }
    out += ']';
  }
  static void read(const Json& j, const std::string& path, std::vector<T>& out,
                   ReadErrors& errors) {
    if (!j.is_array()) return errors.fail(path, "must be an array");
    out.clear();
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size() && errors.ok(); ++i) {
      T item{};
      Codec<T>::read(j[i], index_path(path, i), item, errors);
      out.push_back(std::move(item));
    }
  }
};

// How a map's key is written as a JSON object key, and read back (nothing: refused).
template <typename K>
struct MapKey;

// A named id (tenant, GPU type): its name.
template <typename Tag>
struct MapKey<core::Id<Tag, std::string>> {
  static std::string text(const core::Id<Tag, std::string>& key) { return key.value; }
  static std::optional<core::Id<Tag, std::string>> parse(const std::string& text) {
    return core::Id<Tag, std::string>(text);
  }
  static constexpr std::string_view kRule = "";
};

// A small integer (a priority tier): decimal.
template <>
struct MapKey<std::int32_t> {
  static std::string text(std::int32_t key) { return std::to_string(key); }
  static std::optional<std::int32_t> parse(const std::string& text) {
    return parse_small_int(text);
  }
  static constexpr std::string_view kRule = "key must be an integer from 0 to 1000";
};

// Maps are JSON objects.
template <typename K, typename V>
struct Codec<std::map<K, V>> {
  using Map = std::map<K, V>;
  static void write(const Map& map, std::string& out) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : map) {
      if (!first) out += ',';
      first = false;
      append_string(out, MapKey<K>::text(key));
      out += ':';
      Codec<V>::write(value, out);
    }
    out += '}';
  }
  static void read(const Json& j, const std::string& path, Map& out, ReadErrors& errors) {
    if (!j.is_object()) return errors.fail(path, "must be an object");
    out.clear();
    for (auto it = j.begin(); it != j.end() && errors.ok(); ++it) {
      const std::optional<K> key = MapKey<K>::parse(it.key());
      if (!key) return errors.fail(child_path(path, it.key()), std::string(MapKey<K>::kRule));
      V value{};
      Codec<V>::read(it.value(), child_path(path, it.key()), value, errors);
      out.emplace(*key, std::move(value));
    }
  }
};

// A value as an error message shows it: scalars as JSON (long strings cut short),
// objects and arrays by their kind only.
std::string describe(const Json& j);

// "must be one of a, b or c".
std::string one_of(std::span<const std::string_view> names);

template <typename E>
requires std::is_enum_v<E>
struct Codec<E> {
  static void write(E value, std::string& out) {
    for (const auto& [e, name] : EnumNames<E>::kNames) {
      if (e == value) return append_string(out, name);
    }
    CORRAL_CHECK(false && "an enumerator without a name in EnumNames");
  }
  static void read(const Json& j, const std::string& path, E& out, ReadErrors& errors) {
    std::array<std::string_view, EnumNames<E>::kNames.size()> names{};
    for (std::size_t i = 0; i < names.size(); ++i) {
      names[i] = EnumNames<E>::kNames[i].second;
      if (j.is_string() && j.get_ref<const std::string&>() == names[i]) {
        out = EnumNames<E>::kNames[i].first;
        return;
      }
    }
    errors.fail(path, "must be " + one_of(names) + ", got " + describe(j));
  }
};

}  // namespace corral::cycle::detail
