#include "cli/views/tokens_view.h"

#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::string relative_or(const json& ms, const TimeStyle& style, const char* none) {
  const auto t = ms_time(ms);
  return t ? relative_text(*t, style.now) : none;
}

}  // namespace

std::string token_status(const json& token, core::Time now) {
  if (ms_time(field(token, "revokedAtMs"))) return "revoked";
  const auto expires = ms_time(field(token, "expiresAtMs"));
  if (expires && *expires <= now) return "expired";
  return "active";
}

Table tokens_table(const json& tokens, const TimeStyle& style, bool wide) {
  Table t{.headers = {"NAME", "OWNER", "ROLE", "TENANT", "NODE", "STATUS", "CREATED", "EXPIRES",
                      "LAST USED"}};
  if (wide) t.headers.push_back("ID");
  for (const auto& k : tokens) {
    std::vector<std::string> row = {text(field(k, "name")),
                                    text(field(k, "owner")),
                                    text(field(k, "role")),
                                    text(field(k, "tenant")),
                                    text(field(k, "node")),
                                    token_status(k, style.now),
                                    relative_or(field(k, "createdAtMs"), style, ""),
                                    relative_or(field(k, "expiresAtMs"), style, "never"),
                                    relative_or(field(k, "lastUsedAtMs"), style, "never")};
    if (wide) row.push_back(text(field(k, "id")));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string token_text(const json& k, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<10}{}\n", std::string(key) + ":", value);
  };
  out << "token " << text(field(k, "name")) << "\n";
  line("id", text(field(k, "id")));
  line("owner", text(field(k, "owner")));
  line("role", text(field(k, "role")));
  line("tenant", text(field(k, "tenant")));
  line("node", text(field(k, "node")));
  line("status", token_status(k, style.now));
  line("created", when_text(field(k, "createdAtMs"), style));
  line("expires",
       ms_time(field(k, "expiresAtMs")) ? when_text(field(k, "expiresAtMs"), style) : "never");
  if (field(k, "lastUsedAtMs").is_number() || field(k, "revokedAtMs").is_number()) {
    line("last used", relative_or(field(k, "lastUsedAtMs"), style, "never"));
  }
  line("revoked", when_text(field(k, "revokedAtMs"), style) == "-"
                      ? ""
                      : when_text(field(k, "revokedAtMs"), style));
  if (field(k, "token").is_string()) {
    out << "\n"
        << text(field(k, "token")) << "\n\n"
        << "This is the only time the token is shown: corrald keeps only its hash.\n";
  }
  return out.str();
}

}  // namespace corral::cli
