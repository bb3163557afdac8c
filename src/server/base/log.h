// corrald's operator log: one line per event on stderr (docs/config.md#log), as
// text (the default)
//
//   2026-12-03T14:05:06.123Z info placement job=42 tenant=nlp gpus=16 nodes=n1,n2
//
// or, with `corrald --log-format json` or `log: {format: json}` in --config, as JSON
//
//   {"ts":"2026-12-03T14:05:06.123Z","level":"info","event":"placement","job":42,...}
//
// The events: placement, preemption, resize, checkpoint, cordon, drain, undrain,
// node_lost, action (every audited API call: who did what to what), and the failures of
// the background loops (cycle_failed, ...). A field's value is what its caller chose to
// put there, and callers never put a token, a secretEnv value or a request body.
//
// An event of a transaction travels in its Effects (effects.h) and is written by
// apply_effects() once the transaction commits: a transaction that is retried or fails
// writes nothing, so every line tells of something that happened.
//
// Thread safety: Logger is safe for concurrent use; each line is written whole.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/result.h"
#include "server/base/thread_annotations.h"

namespace corral::server {

enum class LogLevel { kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

// "info", "warn", "error"; "text", "json".
std::string_view to_string(LogLevel level);
std::string_view to_string(LogFormat format);
// "text" or "json"; InvalidArgument naming `field` otherwise.
core::Result<LogFormat> parse_log_format(std::string_view text, const std::string& field);

// The `log:` section of corrald's --config.
struct LogSettings {
  LogFormat format = LogFormat::kText;
};

using LogValue = std::variant<std::int64_t, bool, std::string>;

// One line to be: an event name and its fields, in the order they are added.
struct LogEvent {
  explicit LogEvent(std::string event_name, LogLevel event_level = LogLevel::kInfo)
      : event(std::move(event_name)), level(event_level) {}

  // Adds a field. REQUIRES: `key` is a camelCase name other than ts, level and event.
  LogEvent& add(std::string key, std::string value);
  LogEvent& add(std::string key, const char* value) {
    return add(std::move(key), std::string(value));
  }
  LogEvent& add(std::string key, std::int64_t value);
  LogEvent& add(std::string key, std::int32_t value) {
    return add(std::move(key), static_cast<std::int64_t>(value));
  }
  LogEvent& add(std::string key, bool value);

  std::string event;  // lowercase, words joined by '_'
  LogLevel level;
  std::vector<std::pair<std::string, LogValue>> fields;
};

// `e` as one line (no newline) at `at_ms` (Unix milliseconds). Text: a string value is
// written bare when it is non-empty printable ASCII without spaces, quotes, '=' or '\',
// else as a JSON string (ASCII-only: user bytes can neither break a line nor smuggle
// control characters). JSON: one object, ts, level and event first, then the fields.
std::string format_log_line(const LogEvent& e, LogFormat format, std::int64_t at_ms);

// "2026-12-03T14:05:06.123Z".
std::string format_log_time(std::int64_t at_ms);

class Logger {
 public:
  using Sink = std::function<void(std::string_view line)>;  // the line ends in '\n'
  // `sink` nullptr: stderr.
  explicit Logger(Sink sink = nullptr) : sink_(std::move(sink)) {}
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  void set_format(LogFormat format) CORRAL_EXCLUDES(mu_);
  LogFormat format() const CORRAL_EXCLUDES(mu_);
  // Writes `e`, stamped with the wall clock's time now.
  void write(const LogEvent& e) CORRAL_EXCLUDES(mu_);
  void write_all(const std::vector<LogEvent>& events) CORRAL_EXCLUDES(mu_);

 private:
  mutable std::mutex mu_;
  LogFormat format_ CORRAL_GUARDED_BY(mu_) = LogFormat::kText;
  const Sink sink_;
};

// The process's logger (stderr; text until Corrald::start sets the config's format).
// Note for posterity: its lines are stamped with the wall clock, not with corrald's
// core::Clock, on purpose: a log line says when it was written, to be read beside other
// programs' logs, even while a test runs corrald on a manual clock; and a process-wide
// logger cannot hold a clock that a test owns and destroys.
Logger& process_log();

}  // namespace corral::server
