#include "server/http/list_page.h"

#include "server/base/model_json.h"

namespace corral::server {

core::Result<PageRequest> read_page_request(const std::optional<std::string>& limit,
                                            const std::optional<std::string>& cursor) {
  PageRequest page;
  if (limit) {
    const auto n = parse_decimal(*limit);
    if (!n || *n < 1 || *n > 10000) {
      return core::invalid_argument("limit", "must be an integer between 1 and 10000");
    }
    page.limit = static_cast<std::int32_t>(*n);
  }
  if (cursor) {
    // A cursor is a key we wrote: a decimal or a name, never longer than a name.
    if (cursor->empty() || cursor->size() > 256) {
      return core::invalid_argument("cursor", "must be a nextCursor of an earlier answer");
    }
    page.cursor = *cursor;
  }
  return page;
}

core::Result<std::int64_t> id_cursor(const PageRequest& page) {
  if (!page.cursor) return std::int64_t{0};
  const auto id = parse_decimal(*page.cursor);
  if (!id) return core::invalid_argument("cursor", "must be a nextCursor of an earlier answer");
  return *id;
}

core::Result<std::string> name_cursor(const PageRequest& page) {
  if (!page.cursor) return std::string();
  if (!valid_name(*page.cursor)) {
    return core::invalid_argument("cursor", "must be a nextCursor of an earlier answer");
  }
  return *page.cursor;
}

}  // namespace corral::server
