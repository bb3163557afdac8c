#include "cli/commands/remote.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <httplib.h>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/validate.h"
#include "core/units.h"

namespace corral::cli {
namespace {

// `key: value` lines of ~/.config/corral/config.yaml (a flat map is all it holds).
std::map<std::string, std::string> read_config() {
  std::map<std::string, std::string> out;
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string path =
      xdg != nullptr && *xdg != '\0'
          ? std::string(xdg) + "/corral/config.yaml"
          : std::string(home != nullptr ? home : "") + "/.config/corral/config.yaml";
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t\"'"));
      s.erase(s.find_last_not_of(" \t\r\"'") + 1);
      return s;
    };
    out[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  return out;
}

std::string resolve(const std::string& flag, const char* env, const std::string& key,
                    const std::string& fallback) {
  if (!flag.empty()) return flag;
  if (const char* v = std::getenv(env); v != nullptr && *v != '\0') return v;
  const auto config = read_config();
  if (const auto it = config.find(key); it != config.end() && !it->second.empty()) {
    return it->second;
  }
  return fallback;
}

}  // namespace

void add_remote_flags(CLI::App& cmd, RemoteOptions& options) {
  cmd.add_option("--server", options.server,
                 "corrald URL (else CORRAL_SERVER, else config.yaml, else "
                 "http://127.0.0.1:8470)");
  cmd.add_option("--token", options.token, "bearer token (else CORRAL_TOKEN, else config.yaml)");
  std::string formats;
  for (const auto& f : options.formats) formats += (formats.empty() ? "" : ", ") + f;
  cmd.add_option("-o,--output", options.output, "output: " + formats)
      ->check(CLI::IsMember(options.formats));
  cmd.add_option("--chunk-size", options.chunk_size,
                 "items to ask for per page of a list; every page is fetched (1-10000)")
      ->check(CLI::Range(1, 10000));
}

Answer call(const RemoteOptions& options, const std::string& method, const std::string& path,
            const std::string& body, const std::string& content_type,
            const std::map<std::string, std::string>& headers) {
  const std::string server =
      resolve(options.server, "CORRAL_SERVER", "server", "http://127.0.0.1:8470");
  const std::string token = resolve(options.token, "CORRAL_TOKEN", "token", "");
  Answer answer;
  httplib::Client client(server);
  if (!client.is_valid()) {
    answer.error = "bad server URL " + server;
    return answer;
  }
  client.set_connection_timeout(10, 0);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(60, 0);
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  for (const auto& [k, v] : headers) h.emplace(k, v);
  httplib::Result r = method == "GET"   ? client.Get(path, h)
                      : method == "PUT" ? client.Put(path, h, body, content_type)
                                        : client.Post(path, h, body, content_type);
  if (!r) {
    answer.error = "cannot reach " + server + ": " + httplib::to_string(r.error());
    return answer;
  }
  answer.status = r->status;
  answer.body = nlohmann::json::parse(r->body, nullptr, false);
  if (answer.body.is_discarded()) answer.body = nlohmann::json(r->body);
  return answer;
}

std::string query_value(const std::string& value) {
  std::string out;
  for (const unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Answer call_list(const RemoteOptions& options, const std::string& path,
                 const std::string& items_key) {
  const std::string first = path + (path.find('?') == std::string::npos ? "?" : "&") +
                            "limit=" + std::to_string(options.chunk_size);
  Answer all = call(options, "GET", first);
  if (all.status != 200 || !all.body.is_object()) return all;
  nlohmann::json next = all.body.value("nextCursor", nlohmann::json());
  while (next.is_string()) {
    Answer page = call(options, "GET", first + "&cursor=" + query_value(next.get<std::string>()));
    if (page.status != 200 || !page.body.is_object()) return page;
    for (auto& item : page.body[items_key]) all.body[items_key].push_back(std::move(item));
    next = page.body.value("nextCursor", nlohmann::json());
  }
  all.body["nextCursor"] = nullptr;
  return all;
}

int report_failure(const std::string& command, const Answer& answer, std::ostream& err) {
  if (answer.status == 0) {
    err << "corral " << command << ": " << answer.error << "\n";
    return kExitUsage;
  }
  const auto& e = answer.body.is_object() ? answer.body.value("error", nlohmann::json::object())
                                          : nlohmann::json::object();
  const std::string head =
      "corral " + command + ": " + std::to_string(answer.status) + " " + e.value("code", "error");
  // One line per error in `details` (a spec with three mistakes prints three), each
  // naming its own field; a body without them (an older corrald) gives field and message.
  const nlohmann::json details = e.value("details", nlohmann::json::array());
  if (details.is_array() && !details.empty()) {
    for (const nlohmann::json& d : details) {
      const std::string field = d.is_object() ? d.value("field", "") : "";
      err << head << ": " << (field.empty() ? "" : field + ": ")
          << (d.is_object() ? d.value("reason", d.dump()) : d.dump()) << "\n";
    }
    return kExitInvalid;
  }
  err << head;
  const std::string field = e.value("field", "");
  if (!field.empty()) err << ": " << field;
  err << ": " << e.value("message", answer.body.dump()) << "\n";
  return kExitInvalid;
}

void print_table(std::ostream& out, const std::vector<std::string>& headers,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out << cells[c];
      if (c + 1 < cells.size()) out << std::string(width[c] - cells[c].size() + 2, ' ');
    }
    out << "\n";
  };
  line(headers);
  for (const auto& row : rows) line(row);
}

void print_csv(std::ostream& out, const std::vector<std::string>& headers,
               const std::vector<std::vector<std::string>>& rows) {
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& v = cells[c];
      if (v.find_first_of(",\"\r\n") == std::string::npos) {
        out << v;
      } else {
        out << '"';
        for (const char ch : v) out << (ch == '"' ? "\"\"" : std::string(1, ch));
        out << '"';
      }
      out << (c + 1 < cells.size() ? "," : "\r\n");
    }
  };
  line(headers);
  for (const auto& row : rows) line(row);
}

std::string money_text(std::int64_t micros) {
  const bool negative = micros < 0;
  const std::int64_t cents = ((negative ? -micros : micros) + 5'000) / 10'000;
  return fmt::format("{}{}.{:02}", negative ? "-" : "", cents / 100, cents % 100);
}

std::string date_text(const nlohmann::json& ms) {
  if (!ms.is_number_integer() || ms.get<std::int64_t>() == 0) return "";
  return core::format_utc(core::time_from_ms(ms.get<std::int64_t>()));
}

std::string text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

CLI::App* add_remote_command(CLI::App& app, std::function<int()>& run, const std::string& name,
                             const std::string& help, std::function<int(const RemoteOptions&)> fn,
                             std::shared_ptr<RemoteOptions> options) {
  if (!options) options = std::make_shared<RemoteOptions>();
  CLI::App* cmd = app.add_subcommand(name, help);
  add_remote_flags(*cmd, *options);
  cmd->callback(
      [options, fn = std::move(fn), &run] { run = [options, fn] { return fn(*options); }; });
  return cmd;
}

}  // namespace corral::cli
