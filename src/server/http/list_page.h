// One shape for every list answer (docs/api/openapi.yaml, "Lists"): the request says
// `limit` (1 to 10000, default 1000) and `cursor` (a previous answer's nextCursor), the
// answer carries its items and `nextCursor`, a string when more items follow and null on
// the last page. Following nextCursor with the same filters visits every item once.
// Filters apply before the limit, so a page is short only when it is the last.
//
// A cursor is opaque to clients; inside it is the key of the last item sent (a job id, a
// node name), and the next page starts after that key, so items added or removed between
// pages never make another item repeat or go missing.
//
// Thread safety: free functions and a value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace corral::server {

struct PageRequest {
  std::int32_t limit = 1000;
  std::optional<std::string> cursor;  // absent: from the first item
};

// Reads `limit` and `cursor` as the query sent them (nullopt: not sent).
core::Result<PageRequest> read_page_request(const std::optional<std::string>& limit,
                                            const std::optional<std::string>& cursor);

// The cursor of a list keyed by a positive integer (job ids, sequence numbers): 0 when
// absent; InvalidArgument naming "cursor" when it is no such key.
core::Result<std::int64_t> id_cursor(const PageRequest& page);

// The cursor of a list keyed by a name (valid_name): "" when absent.
core::Result<std::string> name_cursor(const PageRequest& page);

// The answer {items_key: items, nextCursor}: `items` holds at most limit + 1 items, the
// extra one only to say that more follow (it is dropped); `key_of(i)` is item i's cursor.
template <class KeyOf>
nlohmann::json page_answer(const char* items_key, std::vector<nlohmann::json> items,
                           const PageRequest& page, KeyOf key_of) {
  nlohmann::json next = nullptr;
  if (items.size() > static_cast<std::size_t>(page.limit)) {
    items.resize(static_cast<std::size_t>(page.limit));
    next = key_of(items.size() - 1);
  }
  return {{items_key, std::move(items)}, {"nextCursor", std::move(next)}};
}

// The page of `rows` (each keyed by a name, `row.id.value`) after the cursor, in name
// order: `view(row)` gives a row's item, nullopt for a row the caller may not see (skipped
// before the limit counts), or an error that fails the page.
template <class Row, class View>
core::Result<nlohmann::json> name_page(const char* items_key, std::vector<Row> rows,
                                       const PageRequest& page, View view) {
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.id.value < b.id.value; });
  std::vector<nlohmann::json> items;
  std::vector<std::string> keys;
  for (const Row& row : rows) {
    if (row.id.value <= after) continue;
    if (items.size() > static_cast<std::size_t>(page.limit)) break;
    CORRAL_ASSIGN_OR_RETURN(std::optional<nlohmann::json> item, view(row));
    if (!item) continue;
    items.push_back(std::move(*item));
    keys.push_back(row.id.value);
  }
  return page_answer(items_key, std::move(items), page, [&](std::size_t i) { return keys[i]; });
}

}  // namespace corral::server
