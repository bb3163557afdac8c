// The dashboard's files (src/server/web/), compiled into corrald by
// src/server/CMakeLists.txt.
//
// Thread safety: constant data.
#pragma once

#include <span>
#include <string_view>

namespace corral::server {

struct WebAsset {
  std::string_view name;  // the file's name: served at /ui/NAME (index.html also at /)
  std::string_view content_type;
  std::string_view body;
};

std::span<const WebAsset> web_assets();

}  // namespace corral::server
