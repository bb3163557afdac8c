#include "cli/commands/remote.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <httplib.h>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/validate.h"

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

// httplib's Error names one word ("Connection"); a person needs what happened and what
// to check. `saved_errno` is errno right after the failed call: httplib leaves the
// socket's error there when a connect fails.
std::string transport_error_text(httplib::Error e, int saved_errno) {
  switch (e) {
    case httplib::Error::Connection:
      if (saved_errno == EHOSTUNREACH || saved_errno == ENETUNREACH) {
        return "host unreachable (check the address and the network)";
      }
      if (saved_errno == ECONNREFUSED) return "connection refused (is corrald running?)";
      return "connection refused or no route (is corrald running, and is the address right?)";
    case httplib::Error::ConnectionTimeout:
      return "no connection within 10 seconds (is the address right, or a firewall in the way?)";
    case httplib::Error::Read:
      return "the connection closed before corrald answered (did it stop, or time out after "
             "60 seconds?)";
    case httplib::Error::Write:
      return "the request could not be sent (the connection closed)";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return "the TLS handshake failed (" + httplib::to_string(e) + ")";
    default:
      return "the call failed (" + httplib::to_string(e) + ")";
  }
}

}  // namespace

void add_remote_flags(CLI::App& cmd, RemoteOptions& options, bool watchable) {
  cmd.add_option("--server", options.server,
                 "corrald URL (else CORRAL_SERVER, else config.yaml, else "
                 "http://127.0.0.1:8470)");
  cmd.add_option("--token", options.token, "bearer token (else CORRAL_TOKEN, else config.yaml)");
  std::string formats;
  for (const auto& f : options.formats) formats += (formats.empty() ? "" : ", ") + f;
  cmd.add_option("-o,--output", options.output, "output: " + formats)
      ->check(CLI::IsMember(options.formats));
  cmd.add_flag("--utc", options.utc, "times in UTC (default: the local time zone)");
  cmd.add_option("--chunk-size", options.chunk_size,
                 "items to ask for per page of a list; every page is fetched (1-10000)")
      ->check(CLI::Range(1, 10000));
  if (watchable) {
    cmd.add_flag("-w,--watch", options.watch, "redraw every 2 seconds until Ctrl-C");
  }
}

CLI::App* add_remote_command(CLI::App& parent, const CommandEnv& env, const std::string& name,
                             const std::string& help, std::function<int(const RemoteOptions&)> fn,
                             std::shared_ptr<RemoteOptions> options, bool watchable) {
  if (!options) options = std::make_shared<RemoteOptions>();
  options->clock = &env.clock;
  CLI::App* cmd = parent.add_subcommand(name, help);
  add_remote_flags(*cmd, *options, watchable);
  std::function<int()>& run = env.run;
  // CLI11 runs a subcommand's callback before its parent's (`corral runs reproduce RUN`
  // under `corral runs`): the first one chosen, the innermost, is what runs.
  cmd->callback([options, fn = std::move(fn), &run] {
    if (!run) run = [options, fn] { return fn(*options); };
  });
  return cmd;
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
    answer.error = "bad server URL \"" + server + "\" (expected http://HOST:PORT)";
    return answer;
  }
  client.set_connection_timeout(10, 0);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(60, 0);
  httplib::Headers h;
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  for (const auto& [k, v] : headers) h.emplace(k, v);
  errno = 0;
  httplib::Result r = method == "GET"      ? client.Get(path, h)
                      : method == "PUT"    ? client.Put(path, h, body, content_type)
                      : method == "DELETE" ? client.Delete(path, h, body, content_type)
                                           : client.Post(path, h, body, content_type);
  if (!r) {
    answer.error = "cannot reach " + server + ": " + transport_error_text(r.error(), errno);
    return answer;
  }
  answer.status = r->status;
  // A text body (a log) stays text, even when it happens to read as JSON.
  const bool json = r->get_header_value("Content-Type").find("json") != std::string::npos;
  answer.body = json ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json(r->body);
  if (answer.body.is_discarded()) answer.body = nlohmann::json(r->body);
  return answer;
}

Answer post_once(const RemoteOptions& options, const std::string& path, const std::string& body,
                 const std::string& content_type, std::string key) {
  if (key.empty()) {
    key = "cli-" + std::to_string(std::random_device{}()) + "-" +
          std::to_string(std::random_device{}());
  }
  Answer a = call(options, "POST", path, body, content_type, {{"Idempotency-Key", key}});
  if (a.status == 0)
    a = call(options, "POST", path, body, content_type, {{"Idempotency-Key", key}});
  return a;
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
  // naming its own field; a body without them gives the message.
  const nlohmann::json details = e.value("details", nlohmann::json::array());
  if (details.is_array() && !details.empty()) {
    for (const nlohmann::json& d : details) {
      const std::string field_name = d.is_object() ? d.value("field", "") : "";
      err << head << ": " << (field_name.empty() ? "" : field_name + ": ")
          << (d.is_object() ? d.value("reason", d.dump()) : d.dump()) << "\n";
    }
    return kExitInvalid;
  }
  // The message names its field itself (error_json).
  err << head << ": " << e.value("message", answer.body.dump()) << "\n";
  return kExitInvalid;
}

int usage_error(const std::string& command, const std::string& message) {
  std::cerr << "corral " << command << ": " << message << "\n";
  return kExitUsage;
}

Format format_of(const RemoteOptions& options) {
  return format_from_string(options.output).value_or(Format::kTable);
}

TimeStyle time_style(const RemoteOptions& options) {
  return {.now = options.clock != nullptr ? options.clock->now() : core::Time{},
          .zone = options.utc ? Zone::utc() : Zone::local()};
}

void print_output(std::ostream& out, const RemoteOptions& options, const nlohmann::json& doc,
                  const std::function<std::string(bool wide)>& human) {
  out << output_text(format_of(options), doc, human);
}

}  // namespace corral::cli
