// What every command that talks to corrald shares: where the server is and which token
// to send (flags, then CORRAL_SERVER / CORRAL_TOKEN, then ~/.config/corral/config.yaml
// with `server:` and `token:` lines), one HTTP call, and printing the answer with -o
// table|wide|json|yaml in local time or --utc, once or with -w every 2 seconds.
//
// Thread safety: not for concurrent use (writes to the standard streams).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/format/output.h"
#include "cli/format/time_text.h"
#include "cli/format/units_text.h"
#include "core/clock.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11 names it, not us
class App;
}  // namespace CLI

namespace corral::cli {

// What registering a command needs: where the selected command's body goes, and the
// clock its times are rendered against (main's SystemClock; a test's ManualClock).
struct CommandEnv {
  std::function<int()>& run;
  const core::Clock& clock;
};

struct RemoteOptions {
  std::string server;  // http://127.0.0.1:8470
  std::string token;
  std::string output = "table";
  std::vector<std::string> formats = {"table", "wide", "json", "yaml"};  // what -o accepts
  int chunk_size = 500;  // items a list asks for per page (kubectl's --chunk-size)
  bool utc = false;      // times in UTC rather than the local zone
  bool watch = false;    // -w: redraw every 2 s until Ctrl-C (list commands only)
  const core::Clock* clock = nullptr;
};

// Adds --server, --token, -o/--output (one of options.formats), --utc and --chunk-size
// to `cmd`; -w/--watch too when `watchable`.
void add_remote_flags(CLI::App& cmd, RemoteOptions& options, bool watchable = false);

// Registers `name` under `parent` (the app, or a group such as `tenant`) with the remote
// flags; when it is selected, env.run is set to run `fn(options)`.
CLI::App* add_remote_command(CLI::App& parent, const CommandEnv& env, const std::string& name,
                             const std::string& help, std::function<int(const RemoteOptions&)> fn,
                             std::shared_ptr<RemoteOptions> options = nullptr,
                             bool watchable = false);

struct Answer {
  int status = 0;       // 0: no answer
  nlohmann::json body;  // the JSON answer, or a non-JSON body as a string
  std::string error;    // transport error, when status is 0: a whole sentence
};

// One call to corrald (GET, POST, PUT or DELETE). `body` empty: no body.
Answer call(const RemoteOptions& options, const std::string& method, const std::string& path,
            const std::string& body = {}, const std::string& content_type = "application/json",
            const std::map<std::string, std::string>& headers = {});

// A POST that adds something (a job, feature values, a drift report) and must do so once:
// sent with `key` as its Idempotency-Key (empty: one made for this invocation), and sent
// once more under it when the first try got no answer, so that the retry cannot add twice.
Answer post_once(const RemoteOptions& options, const std::string& path, const std::string& body,
                 const std::string& content_type = "application/json", std::string key = {});

// A GET of a list (docs/api/openapi.yaml, "Lists") with every page: follows nextCursor
// to the end and answers the first page's body with all pages' `items_key` items. The
// first failed page's answer when one fails.
Answer call_list(const RemoteOptions& options, const std::string& path,
                 const std::string& items_key);

// Prints an error answer (the API's {"error": ...}, one line per entry of its details,
// or the transport error) to `err` and returns the exit code for it: 1 for a refusal by
// the server, 2 for no answer.
int report_failure(const std::string& command, const Answer& answer, std::ostream& err);

// Prints "corral COMMAND: message" to stderr and returns kExitUsage.
int usage_error(const std::string& command, const std::string& message);

// `value` as a URL query value: unreserved characters as they are, others %XX.
std::string query_value(const std::string& value);

// The options' -o, and their times: now from their clock, in UTC or the local zone.
Format format_of(const RemoteOptions& options);
TimeStyle time_style(const RemoteOptions& options);

// Writes the document or its human text (output.h) to `out`.
void print_output(std::ostream& out, const RemoteOptions& options, const nlohmann::json& doc,
                  const std::function<std::string(bool wide)>& human);

// Runs `draw` once; with options.watch, again every 2 s until SIGINT or SIGTERM, the
// screen cleared before each drawing when stdout is a terminal (else each drawing is
// printed after the last, a blank line between). `draw` writes to the stream it is
// given and returns an exit code; watching goes on after a failed drawing. Returns the
// drawing's code when not watching, else 0 once a signal stopped the watch.
int run_watched(const RemoteOptions& options, const std::function<int(std::ostream&)>& draw);

}  // namespace corral::cli
