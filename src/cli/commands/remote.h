// What every command that talks to corrald shares: where the server is and which token
// to send (flags, then CORRAL_SERVER / CORRAL_TOKEN, then ~/.config/corral/config.yaml
// with `server:` and `token:` lines), one HTTP call, and printing the answer as JSON
// (-o json) or as a table.
//
// Thread safety: not for concurrent use (writes to the streams it is given).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11 names it, not us
class App;
}  // namespace CLI

namespace corral::cli {

struct RemoteOptions {
  std::string server;  // http://127.0.0.1:8470
  std::string token;
  std::string output = "table";                          // or "json"
  std::vector<std::string> formats = {"table", "json"};  // what -o accepts
  int chunk_size = 500;  // items a list asks for per page (kubectl's --chunk-size)
};

// Adds --server, --token, -o/--output (one of options.formats) and --chunk-size to `cmd`.
void add_remote_flags(CLI::App& cmd, RemoteOptions& options);

struct Answer {
  int status = 0;  // 0: no answer
  nlohmann::json body;
  std::string error;  // transport error, when status is 0
};

// One call to corrald. `body` empty: no body. Resolves the server and token first.
Answer call(const RemoteOptions& options, const std::string& method, const std::string& path,
            const std::string& body = {}, const std::string& content_type = "application/json",
            const std::map<std::string, std::string>& headers = {});

// A GET of a list (docs/api/openapi.yaml, "Lists") with every page: follows nextCursor
// to the end and answers the first page's body with all pages' `items_key` items. The
// first failed page's answer when one fails.
Answer call_list(const RemoteOptions& options, const std::string& path,
                 const std::string& items_key);

// Prints an error answer (the API's {"error": ...}, one line per entry of its details,
// or the transport error) to `err` and returns the exit code for it: 1 for a refusal by
// the server, 2 for no answer.
int report_failure(const std::string& command, const Answer& answer, std::ostream& err);

// Prints `rows` as aligned columns under `headers`.
void print_table(std::ostream& out, const std::vector<std::string>& headers,
                 const std::vector<std::vector<std::string>>& rows);
// The same as CSV (RFC 4180: a cell with a comma, quote or line break is quoted).
void print_csv(std::ostream& out, const std::vector<std::string>& headers,
               const std::vector<std::vector<std::string>>& rows);

// `value` as a URL query value: unreserved characters as they are, others %XX.
std::string query_value(const std::string& value);

// A JSON scalar as text ("" for null).
std::string text(const nlohmann::json& value);
// Micro-units of a currency as its usual two decimals, rounded half up: 12345678 ->
// "12.35".
std::string money_text(std::int64_t micros);
// A time the API sends as milliseconds since the epoch, as a UTC date ("" for null or 0).
std::string date_text(const nlohmann::json& ms);

// Registers a command whose body is `fn(options)`; `run` is set when it is selected.
CLI::App* add_remote_command(CLI::App& app, std::function<int()>& run, const std::string& name,
                             const std::string& help, std::function<int(const RemoteOptions&)> fn,
                             std::shared_ptr<RemoteOptions> options = nullptr);

}  // namespace corral::cli
